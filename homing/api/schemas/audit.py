"""The audit log as the API shows it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from homing.domain.audit import AuditEvent


class ActorPublic(BaseModel):
    """Who made a change: ``kind`` (api_key, admin, user, cli, system), ``id``, ``name``."""

    kind: str
    id: str
    name: str | None = None


class AuditEventPublic(BaseModel):
    """One change: who, what, to which target, when, and what changed (no secret:
    a credential or secret shows only as ``"changed"``)."""

    id: str
    tenant_id: str | None
    actor: ActorPublic
    action: str
    target_type: str
    target_id: str | None
    changes: dict[str, Any]
    request_id: str | None
    created_at: datetime

    @classmethod
    def of(cls, event: AuditEvent) -> AuditEventPublic:
        actor = event.actor
        return cls(
            id=event.id,
            tenant_id=event.tenant_id,
            actor=ActorPublic(kind=actor.kind.value, id=actor.id, name=actor.name),
            action=event.action.value,
            target_type=event.target_type,
            target_id=event.target_id,
            changes=event.changes,
            request_id=event.request_id,
            created_at=event.created_at,
        )
