"""What a page of notifications asks for; the SQL is
``homing.store.notification_search``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class NotificationFilter:
    """What a page asks for: the tenant's notifications, of one status when set."""

    tenant_id: str
    status: str | None = None
