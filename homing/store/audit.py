"""The SQL of the audit log: write an event inside a change's transaction, page, purge.

``write_event`` takes the connection of the transaction that makes the change, so a
change and its event commit together or not at all (docs/architecture.md, "The audit
log"). The values arrive already bounded and free of secrets (``homing.managers.audit``).

It is also where suspension is a rule for every change: an event of a tenant's own
actor (one of its API keys, a console user) about a suspended tenant raises
TenantSuspended in that transaction, so the change rolls back whichever edge, manager
or store method made it (docs/security.md, "The suspended tenant"). The operator's
actors (the admin token, the ``homing`` command) and Homing itself may still act.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.domain.audit import AuditEvent, AuditFilter
from homing.errors import TenantSuspended
from homing.models import Actor, ActorKind, AuditAction
from homing.store.database import Database
from homing.store.sql import one_of
from homing.store.tables.audit import audit_events
from homing.store.tables.core import tenants

# Who acts for a tenant; the admin token, the command and Homing itself act on one.
_TENANTS_OWN = frozenset({ActorKind.API_KEY, ActorKind.USER})
# What only an operator does to a tenant: the console's operator pages name a user.
_OPERATORS = frozenset(
    {
        AuditAction.TENANT_CREATED,
        AuditAction.TENANT_UPDATED,
        AuditAction.TENANT_PLAN_CHANGED,
        AuditAction.TENANT_SUSPENDED,
        AuditAction.TENANT_RESUMED,
    }
)


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
    """Insert ``event`` in the caller's transaction (nothing when it is None);
    TenantSuspended, before anything is written, when it is a change of a suspended
    tenant by one of its own actors (``refuse_suspended_change``)."""
    if event is not None:
        await refuse_suspended_change(conn, event)
        await conn.execute(audit_events.insert().values(**_row(event)))


def by_tenant(event: AuditEvent) -> bool:
    """Whether ``event`` is a change a tenant makes to itself (through an API key or
    the console), which its suspension refuses; not the operator's, nor Homing's."""
    return (
        event.tenant_id is not None
        and event.actor.kind in _TENANTS_OWN
        and event.action not in _OPERATORS
    )


async def refuse_suspended_change(conn: AsyncConnection, event: AuditEvent) -> None:
    """TenantSuspended when ``event`` is the tenant's own change (``by_tenant``) and
    the tenant is suspended, read in the caller's transaction: one primary-key read,
    for changes only (an accept writes no event)."""
    if not by_tenant(event):
        return
    query = select(tenants.c.suspended).where(tenants.c.id == event.tenant_id)
    if await conn.scalar(query):
        raise TenantSuspended()


class AuditStore:
    """Reads of the audit log, events recorded on their own, and the retention purge."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, event: AuditEvent) -> None:
        """Record an event in a transaction of its own, for a change made already in
        others (the bulk dead-letter actions, whose manager refuses a suspended
        tenant before it starts): the change is done, so its event is written."""
        async with self._db.transaction() as conn:
            await conn.execute(audit_events.insert().values(**_row(event)))

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
