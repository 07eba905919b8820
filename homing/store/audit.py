"""The SQL of the audit log: write an event inside a change's transaction, page, purge.

``write_event`` takes the connection of the transaction that makes the change, so a
change and its event commit together or not at all (docs/architecture.md, "The audit
log"). The values arrive already bounded and free of secrets (``homing.managers.audit``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.models import Actor, ActorKind, AuditAction
from homing.store.audit_schema import audit_events
from homing.store.database import Database
from homing.store.sql import one_of


@dataclass(frozen=True, slots=True)
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


def _row(event: AuditEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "tenant_id": event.tenant_id,
        "actor_kind": event.actor.kind.value,
        "actor_id": event.actor.id,
        "actor_name": event.actor.name,
        "action": event.action.value,
        "target_type": event.target_type,
        "target_id": event.target_id,
        "changes": event.changes,
        "request_id": event.request_id,
        "created_at": event.created_at,
    }


def _event(row: Any) -> AuditEvent:
    return AuditEvent(
        id=row.id,
        tenant_id=row.tenant_id,
        actor=Actor(ActorKind(row.actor_kind), row.actor_id, row.actor_name),
        action=AuditAction(row.action),
        target_type=row.target_type,
        target_id=row.target_id,
        changes=dict(row.changes),
        request_id=row.request_id,
        created_at=row.created_at,
    )


async def write_event(conn: AsyncConnection, event: AuditEvent | None) -> None:
    """Insert ``event`` in the caller's transaction (nothing when it is None)."""
    if event is not None:
        await conn.execute(audit_events.insert().values(**_row(event)))


class AuditStore:
    """Reads of the audit log, events recorded on their own, and the retention purge."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, event: AuditEvent) -> None:
        """Record an event in a transaction of its own (a change that has none)."""
        async with self._db.transaction() as conn:
            await write_event(conn, event)

    async def page(
        self, f: AuditFilter, *, limit: int, cursor: str | None
    ) -> tuple[list[AuditEvent], str | None]:
        """Newest first (ids are time-ordered); ``cursor`` is the last id of a page."""
        c = audit_events.c
        query = select(audit_events)
        if f.tenant_id is not None:
            query = query.where(c.tenant_id == f.tenant_id)
        if f.action is not None:
            query = query.where(c.action == f.action.value)
        if f.since is not None:
            query = query.where(c.created_at >= f.since)
        if f.until is not None:
            query = query.where(c.created_at < f.until)
        if cursor is not None:
            query = query.where(c.id < cursor)
        query = query.order_by(c.id.desc()).limit(limit + 1)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        page = [_event(row) for row in rows[:limit]]
        return page, page[-1].id if len(rows) > limit else None

    async def count_before(self, before: datetime) -> int:
        """How many events are older than ``before`` (a dry run of the purge)."""
        query = select(func.count()).select_from(audit_events)
        async with self._db.transaction() as conn:
            return int(await conn.scalar(query.where(audit_events.c.created_at < before)) or 0)

    async def purge_before(self, before: datetime, limit: int) -> int:
        """Delete up to ``limit`` of the oldest events older than ``before`` (walking
        ``ix_audit_events_created_at``)."""
        c = audit_events.c
        oldest = select(c.id).where(c.created_at < before).order_by(c.created_at).limit(limit)
        async with self._db.transaction() as conn:
            ids = list((await conn.scalars(oldest)).all())
            if not ids:
                return 0
            result = await conn.execute(delete(audit_events).where(one_of(conn, c.id, ids)))
            return int(result.rowcount)
