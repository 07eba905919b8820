"""Claims and reads that only tests make, kept out of ``homing/store`` (issue #40).

The worker claims with ``QueueStore.claim_ready``, which also ends the suppressed
among the claimed jobs and reads their tenants' accounts; a store test claims the bare
way, to see the fair pick and the lease alone. These run the store's own claim
(``QueueStore._claim_in``) in a transaction of their own, as ``claim_ready`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, func, select

from homing.models import ClaimedJob, Queue
from homing.store.database import Database
from homing.store.queue import QueueStore
from homing.store.tables.core import notices, queue_entries


async def claim(
    store: QueueStore, queue: Queue, limit: int, lease_seconds: float
) -> list[ClaimedJob]:
    """Lease up to ``limit`` due entries of ``queue``: priority first, tenants
    round-robin, none past a tenant's in-flight cap (homing.store.picking)."""
    return await claim_first(store, (queue,), limit, lease_seconds)


async def claim_first(
    store: QueueStore, queues: Sequence[Queue], limit: int, lease_seconds: float
) -> list[ClaimedJob]:
    """``claim`` from the first of ``queues``, in this order, that has due entries, in
    one transaction."""
    epoch = store._clock.now()
    async with store._db.transaction() as conn:
        claimed, _ = await store._claim_in(conn, queues, limit, epoch, lease_seconds)
    return claimed


async def pending_count(db: Database, queue: Queue | None = None) -> int:
    """Queue entries left (of ``queue``, or of every queue): claimed ones included."""
    query = select(func.count()).select_from(queue_entries)
    if queue is not None:
        query = query.where(queue_entries.c.queue == queue.value)
    async with db.transaction() as conn:
        return int((await conn.execute(query)).scalar_one())


async def notices_of(db: Database, tenant_id: str, limit: int = 100) -> list[Row[Any]]:
    """The tenant's stored notices (rows of ``notices``), newest first."""
    c = notices.c
    query = (
        select(notices)
        .where(c.tenant_id == tenant_id)
        .order_by(c.created_at.desc(), c.id.desc())
        .limit(limit)
    )
    async with db.transaction() as conn:
        return list((await conn.execute(query)).all())
