"""The operator's view of the queue: depth by queue, priority and state, the age of the
oldest claimable entry, the tenants with the most waiting jobs, and those tenants'
backlog by queue and priority.

Grouped reads of ``queue_entries``, which holds only jobs that still have work to
do (a terminal job has no entry), so their cost is one pass over the live backlog,
never over the jobs table.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Label, case, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.store.ordering import BLOCKED
from homing.store.tables.core import queue_entries, tenants

TOP_TENANTS = 10


@dataclass(frozen=True, slots=True)
class QueueDepth:
    """How many entries of one queue and priority are in one state, and for ``waiting``
    how long the oldest of them has been claimable (seconds; None for other states)."""

    queue: str
    priority: int
    state: str
    count: int
    oldest_age_seconds: float | None


@dataclass(frozen=True, slots=True)
class TenantBacklog:
    """A tenant and how many of its entries are claimable now."""

    tenant_id: str
    waiting: int


@dataclass(kw_only=True, frozen=True, slots=True)
class TenantDepth:
    """A tenant's claimable entries on one queue and priority, and how long the oldest
    of them has been claimable (seconds); ``name`` is the tenant's."""

    tenant_id: str
    name: str | None
    queue: str
    priority: int
    waiting: int
    oldest_age_seconds: float


@dataclass(frozen=True, slots=True)
class QueueView:
    """The depths, queue by queue, and the top tenants by waiting entries."""

    depths: list[QueueDepth]
    top_tenants: list[TenantBacklog]


@dataclass(frozen=True, slots=True)
class Claimable:
    """How many entries of one queue and priority are claimable now, and how long the
    oldest of them has been (seconds)."""

    queue: str
    priority: int
    count: int
    oldest_age_seconds: float


async def claimable(conn: AsyncConnection, now: float) -> list[Claimable]:
    """The claimable entries at ``now`` by queue and priority: one grouped read of the
    due range of ``queue_entries`` (the metrics' queue depth, sampled at scrape time)."""
    e = queue_entries.c
    query = (
        select(e.queue, e.priority, func.count(), func.min(e.available_at))
        .where(e.available_at <= now)
        .group_by(e.queue, e.priority)
    )
    return [
        Claimable(row[0], row[1], row[2], max(0.0, now - row[3]))
        for row in (await conn.execute(query)).all()
    ]


def _state(now: float) -> Label[str]:
    # An expired lease is claimable again: ``available_at`` decides before the token.
    e = queue_entries.c
    return case(
        (e.available_at <= now, "waiting"),
        (e.claim_token.is_not(None), "leased"),
        (e.available_at >= BLOCKED, "blocked"),
        else_="scheduled",
    ).label("state")


async def queue_view(conn: AsyncConnection, now: float) -> QueueView:
    """The queue as it stands at ``now`` (epoch seconds)."""
    e = queue_entries.c
    state = _state(now)
    depth_query = (
        select(e.queue, e.priority, state, func.count(), func.min(e.available_at))
        .group_by(e.queue, e.priority, state)
        .order_by(e.queue, e.priority, state)
    )
    depths = [
        QueueDepth(
            queue=row[0],
            priority=row[1],
            state=row[2],
            count=row[3],
            oldest_age_seconds=max(0.0, now - row[4]) if row[2] == "waiting" else None,
        )
        for row in (await conn.execute(depth_query)).all()
    ]
    waiting = func.count().label("waiting")
    top_query = (
        select(e.tenant_id, waiting)
        .where(e.available_at <= now)
        .group_by(e.tenant_id)
        .order_by(waiting.desc(), e.tenant_id)
        .limit(TOP_TENANTS)
    )
    top = [TenantBacklog(row[0], row[1]) for row in (await conn.execute(top_query)).all()]
    return QueueView(depths=depths, top_tenants=top)


async def tenant_depths(conn: AsyncConnection, now: float, limit: int) -> list[TenantDepth]:
    """The ``limit`` largest claimable backlogs at ``now`` by tenant, queue and priority:
    one grouped read of the due range of ``queue_entries``."""
    e = queue_entries.c
    waiting = func.count().label("waiting")
    query = (
        select(e.tenant_id, tenants.c.name, e.queue, e.priority, waiting, func.min(e.available_at))
        .select_from(queue_entries.outerjoin(tenants, tenants.c.id == e.tenant_id))
        .where(e.available_at <= now)
        .group_by(e.tenant_id, tenants.c.name, e.queue, e.priority)
        .order_by(waiting.desc(), e.tenant_id, e.queue, e.priority)
        .limit(limit)
    )
    return [
        TenantDepth(
            tenant_id=row[0],
            name=row[1],
            queue=row[2],
            priority=row[3],
            waiting=row[4],
            oldest_age_seconds=max(0.0, now - row[5]),
        )
        for row in (await conn.execute(query)).all()
    ]
