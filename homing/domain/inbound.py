"""An entry of the inbound journal (docs/inbound.md); the SQL is
``homing.store.inbound``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from homing.models import EntryStatus, EventType


@dataclass(kw_only=True, frozen=True, slots=True)
class Entry:
    """One journal entry, as reprocessing and the job history read it."""

    id: str
    source: str
    provider_account_id: str
    event_id: str
    tenant_id: str | None
    status: EntryStatus
    event_type: EventType | None
    vendor_type: str | None
    job_id: str | None
    payload: Any
    raw: str | None
    detail: dict[str, Any] | None
    error: str | None
    occurred_at: datetime | None
    received_at: datetime
    processed_at: datetime | None
