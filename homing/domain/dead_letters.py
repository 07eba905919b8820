"""A dead letter and the filter of the operations on them; the SQL is
``homing.store.dead_letters``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(kw_only=True, frozen=True, slots=True)
class DeadLetterFilter:
    """Which dead letters an operation applies to; None means "any". ``tenant_id`` is
    always set for a tenant's request and optional for an operator's."""

    tenant_id: str | None = None
    queue: str | None = None
    error_class: str | None = None
    provider: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    q: str | None = None

    def is_empty(self) -> bool:
        """True when nothing but the tenant narrows the set."""
        fields = (self.queue, self.error_class, self.provider, self.since, self.until, self.q)
        return all(value is None for value in fields)


@dataclass(kw_only=True, frozen=True, slots=True)
class DeadLetter:
    """One dead letter as the console shows it; ``provider`` is the job's last one."""

    id: str
    job_id: str
    tenant_id: str
    queue: str
    error: str
    error_class: str
    provider: str | None
    created_at: datetime
    redriven_at: datetime | None
    payload: dict[str, Any]
