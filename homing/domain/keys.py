"""An API key as listed; the SQL is ``homing.store.keys``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(kw_only=True, frozen=True, slots=True)
class ApiKey:
    """An API key as listed: its id, name and prefix, never the key."""

    id: str
    tenant_id: str
    name: str
    prefix: str
    test: bool
    created_at: datetime
    last_used_at: datetime | None
