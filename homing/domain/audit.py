"""An audit event and the filter of its reads (docs/architecture.md, "The audit log");
the SQL is ``homing.store.audit``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from homing.models import Actor, AuditAction


@dataclass(kw_only=True, frozen=True, slots=True)
class AuditEvent:
    """One recorded change. ``tenant_id`` is None for a platform-wide change;
    ``target_id`` may be filled in by the store that creates the target."""

    id: str
    tenant_id: str | None
    actor: Actor
    action: AuditAction
    target_type: str
    target_id: str | None
    changes: dict[str, Any]
    request_id: str | None
    created_at: datetime

    def about(self, *, target_id: str, tenant_id: str | None = None) -> AuditEvent:
        """This event naming a target the store has just created (and its tenant)."""
        return replace(self, target_id=target_id, tenant_id=tenant_id or self.tenant_id)


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """Which events to list; None means "any". A tenant's request always sets
    ``tenant_id``; an operator's may leave it out."""

    tenant_id: str | None = None
    action: AuditAction | None = None
    since: datetime | None = None
    until: datetime | None = None
