"""Accepting many jobs of one tenant and channel in one transaction.

Every new job, its queue entry and its share of the monthly quota commit together, or
nothing does: a batch that would overflow a quota is refused whole (QuotaExceeded).
Items with an Idempotency-Key already used (earlier, or earlier in the same batch)
are answered from that job and use no quota; a reused key with another body is that
item's IdempotencyConflict, not the batch's.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock
from homing.errors import IdempotencyConflict
from homing.plans import Quota, month_of
from homing.store.database import Database
from homing.store.jobs import Accepted, NewJob, entry_row, job_row, replay
from homing.store.ordering import place
from homing.store.rows import job_from_row
from homing.store.schema import jobs, queue_entries
from homing.store.usage import charge

ItemResult = Accepted | IdempotencyConflict


class BatchStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def accept_many(
        self, news: Sequence[NewJob], quotas: Sequence[Quota] = ()
    ) -> list[ItemResult]:
        """One result per job, in order. All jobs share one tenant and channel.

        A concurrent request that takes one of the batch's Idempotency-Keys first
        makes the insert fail; the whole transaction is then run again, and finds it.
        """
        if not news:
            return []
        for attempt in (1, 2):
            try:
                async with self._db.transaction() as conn:
                    return await self._accept(conn, news, quotas)
            except IntegrityError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _accept(
        self, conn: AsyncConnection, news: Sequence[NewJob], quotas: Sequence[Quota]
    ) -> list[ItemResult]:
        epoch = self._clock.now()
        seen = await _prior(conn, news)
        results: list[ItemResult] = []
        rows: list[dict[str, Any]] = []
        for new in news:
            key = new.idempotency_key
            if key is not None and key in seen:
                results.append(_replayed(seen[key], new))
                continue
            row = job_row(new, epoch)
            rows.append(row)
            record = SimpleNamespace(**row)
            if key is not None:
                seen[key] = record
            results.append(Accepted(job=job_from_row(record), replayed=False))
        if rows:
            await conn.execute(jobs.insert(), rows)
            await self._enqueue(conn, [entry_row(r, epoch) for r in rows])
            first = news[0]
            await charge(conn, first.tenant_id, first.channel, len(rows), quotas, month_of(epoch))
        return results

    async def _enqueue(self, conn: AsyncConnection, entries: list[dict[str, Any]]) -> None:
        free = [e for e in entries if e.get("ordering_key") is None]
        if free:
            await conn.execute(queue_entries.insert(), free)
        # Ordered entries one by one, in batch order: each is placed behind the last.
        for entry in entries:
            if entry.get("ordering_key") is not None:
                await place(conn, not self._db.is_sqlite, entry)
                await conn.execute(queue_entries.insert().values(**entry))


async def _prior(conn: AsyncConnection, news: Sequence[NewJob]) -> dict[str, Any]:
    keys = sorted({n.idempotency_key for n in news if n.idempotency_key is not None})
    if not keys:
        return {}
    query = select(jobs).where(
        jobs.c.tenant_id == news[0].tenant_id, jobs.c.idempotency_key.in_(keys)
    )
    return {row.idempotency_key: row for row in (await conn.execute(query)).all()}


def _replayed(prior: Any, new: NewJob) -> ItemResult:
    try:
        return replay(prior, new)
    except IdempotencyConflict as conflict:
        return conflict
