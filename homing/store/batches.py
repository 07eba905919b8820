"""Accepting many jobs of one tenant and channel in one transaction.

Every new job, its queue entry and its share of the monthly quota commit together, or
nothing does: a batch that would overflow a quota is refused whole (QuotaExceeded).
A job to a suppressed recipient is stored SUPPRESSED, with no queue entry and no quota.
Items with an Idempotency-Key already used (earlier, or earlier in the same batch)
are answered from that job and use no quota; a reused key with another body is that
item's IdempotencyConflict, not the batch's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock
from homing.errors import IdempotencyConflict
from homing.models import JobStatus
from homing.plans import Quota, month_of
from homing.store.accepting import Accepted, NewJob, StoredRow, entry_row, job_row, replayed
from homing.store.database import Database
from homing.store.ordering import place
from homing.store.rows import job_from_row
from homing.store.schema import jobs, queue_entries
from homing.store.sql import one_of
from homing.store.suppressions import suppress_rows
from homing.store.usage import charge

ItemResult = Accepted | IdempotencyConflict


class BatchStore:
    """Accepts many jobs of one tenant and channel in one transaction: new jobs, their
    queue entries and quota commit together or nothing does."""

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
        # Each item's job: a new row, or (a repeated key) a row stored before or earlier
        # in this batch. Answered once the new rows are final (suppression may change them).
        items: list[tuple[bool, Any]] = []
        rows: list[dict[str, Any]] = []
        for new in news:
            key = new.idempotency_key
            if key is not None and key in seen:
                items.append((True, seen[key]))
                continue
            row = job_row(new, epoch)
            rows.append(row)
            if key is not None:
                seen[key] = row
            items.append((False, row))
        if rows:
            await suppress_rows(conn, rows)
            await conn.execute(jobs.insert(), rows)
            sendable = [r for r in rows if r["status"] != JobStatus.SUPPRESSED.value]
            await self._enqueue(conn, [entry_row(r, epoch) for r in sendable])
            if sendable:
                first = news[0]
                period = month_of(epoch)
                await charge(conn, first.tenant_id, first.channel, len(sendable), quotas, period)
        return [
            replayed(_record(job), new) if repeated else _new(job)
            for new, (repeated, job) in zip(news, items, strict=True)
        ]

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
        jobs.c.tenant_id == news[0].tenant_id, one_of(conn, jobs.c.idempotency_key, keys)
    )
    return {row.idempotency_key: row for row in (await conn.execute(query)).all()}


def _record(job: Any) -> Any:
    return StoredRow(job) if isinstance(job, dict) else job


def _new(row: dict[str, Any]) -> ItemResult:
    return Accepted(job=job_from_row(StoredRow(row)), replayed=False)
