"""A multi-channel notification and its steps as the tenant reads them
(docs/notifications.md); the SQL is ``homing.store.notification_rows``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(kw_only=True, frozen=True, slots=True)
class Step:
    """A step as the tenant reads it."""

    position: int
    channel: str
    status: str
    reason: str | None
    job_id: str | None
    job_status: str | None
    signal: str | None
    signal_at: datetime | None
    updated_at: datetime
    # When the step was stored (with its notification); ``updated_at``: its last move.
    created_at: datetime | None = None


@dataclass(kw_only=True, frozen=True, slots=True)
class Gathered:
    """The digest a notification was gathered into, as it stands: its window, where
    the notification is in it, and once sent, the notification it was sent as and the
    steps (jobs) of that one."""

    digest_id: str
    key: str
    # open | sent | failed
    status: str
    reason: str | None
    close_at: float
    position: int
    count: int
    sent_as: str | None
    sent_at: datetime | None
    steps: tuple[Step, ...] = ()


@dataclass(kw_only=True, frozen=True, slots=True)
class Notification:
    """A notification as the tenant reads it, its steps in order (none for one
    gathered into a digest: ``gathered`` says where it went)."""

    id: str
    tenant_id: str
    strategy: str
    status: str
    escalate_after_seconds: int | None
    recipient: str
    template: str
    category: str | None
    created_at: datetime
    completed_at: datetime | None
    steps: tuple[Step, ...]
    gathered: Gathered | None = None
