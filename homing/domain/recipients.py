"""A person a tenant sends to (docs/recipients.md); the SQL is
``homing.store.recipients``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(kw_only=True, frozen=True, slots=True)
class Recipient:
    """One person a tenant sends to: an address per channel, a locale and time zone."""

    id: str
    tenant_id: str
    external_id: str
    email: str | None
    phone: str | None
    telegram_chat_id: str | None
    slack_channel: str | None
    locale: str | None
    timezone: str | None
    data: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime

    def __repr__(self) -> str:  # addresses are personal data: never in a repr
        return f"Recipient(id={self.id!r})"
