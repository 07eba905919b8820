"""The SQL of the ledger invariant: find and mend jobs outside it, one batch at a time.

The invariant (docs/reliability.md, "The ledger invariant"): a terminal job has no queue
entry, a non-terminal one has exactly one (the primary key makes "more than one"
impossible). Three ways to break it are looked for:

- ``missing_entry``: a PENDING or PROCESSING job with no entry, which no worker would
  ever claim again. Mended by a fresh entry, due now, placed in its ordering key's line.
- ``terminal_entry``: an entry whose job is terminal. Mended by deleting the entry (and
  releasing the next job of its ordering key).
- ``stale_lease``: a PROCESSING job whose entry's lease ran out longer ago than the
  stale bound. Its claim token still counts against the tenant's in-flight cap, so it
  is released: token cleared, job back to PENDING.

Every batch reads a bounded keyset slice in one statement (one snapshot on either
database) and mends with conditional writes, so a job that a worker or a tenant moved
meanwhile is left alone. Like retention, each batch is one short transaction that on
PostgreSQL first takes a transaction-level advisory lock (``pg_try_advisory_xact_lock``):
when another process holds it, the batch does nothing and says so. SQLite has one
writer (``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, exists, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.models import TERMINAL_STATUSES, JobStatus
from homing.store.accepting import entry_row
from homing.store.database import Database
from homing.store.ordering import lock_ordering_keys, place, release_next
from homing.store.sql import one_of
from homing.store.tables.core import jobs, queue_entries

__all__ = ["RECONCILE_LOCK_KEY", "EntryBatch", "JobBatch", "LedgerStore"]

# Any fixed 64-bit number, the same in every Homing process: "the reconciler is running".
RECONCILE_LOCK_KEY = 0x486F6D696E674C  # "HomingL"

_TERMINAL = sorted(s.value for s in TERMINAL_STATUSES)
_LIVE = (JobStatus.PENDING.value, JobStatus.PROCESSING.value)


@dataclass(frozen=True, slots=True)
class JobBatch:
    """One slice of non-terminal jobs: how many were read, the last id (the next
    slice's start), the ids found with no entry, and how many of those were mended."""

    read: int
    last_id: str | None
    missing: tuple[str, ...]
    mended: int


@dataclass(kw_only=True, frozen=True, slots=True)
class EntryBatch:
    """One slice of queue entries: how many were read, the last job id, the entries of
    terminal jobs and the long-expired leases found, and how many of each were mended."""

    read: int
    last_id: str | None
    terminal: tuple[str, ...]
    stale: tuple[str, ...]
    deleted: int
    released: int


class LedgerStore:
    """Batches of the reconciler: a slice of jobs of one live status, or of queue
    entries, checked against the invariant and (unless a dry run) mended."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def _locked_out(self, conn: AsyncConnection) -> bool:
        """True when another process holds the reconciler's lock (PostgreSQL only)."""
        if self._db.is_sqlite:
            return False
        got = await conn.scalar(
            text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": RECONCILE_LOCK_KEY}
        )
        return not got

    async def jobs_batch(
        self, status: JobStatus, after: str, limit: int, *, mend: bool
    ) -> JobBatch | None:
        """Up to ``limit`` jobs of ``status`` with ids above ``after``, in id order; those
        without an entry are found and, with ``mend``, given one. None: locked out."""
        has_entry = exists().where(queue_entries.c.job_id == jobs.c.id)
        query = (
            select(jobs.c.id, has_entry.label("has_entry"))
            .where(jobs.c.status == status.value, jobs.c.id > after)
            .order_by(jobs.c.id)
            .limit(limit)
        )
        async with self._db.transaction() as conn:
            if await self._locked_out(conn):
                return None
            rows = (await conn.execute(query)).all()
            missing = tuple(r.id for r in rows if not r.has_entry)
            mended = await self._requeue(conn, missing) if mend and missing else 0
        return JobBatch(len(rows), rows[-1].id if rows else None, missing, mended)

    async def _requeue(self, conn: AsyncConnection, ids: Sequence[str]) -> int:
        """Give each of these jobs, if still live and entry-less, a fresh entry due now
        (at its ``send_at`` when that is later)."""
        epoch = self._clock.now()
        c = jobs.c
        still = (
            update(jobs)
            .where(
                one_of(conn, c.id, ids),
                one_of(conn, c.status, _LIVE),
                ~exists().where(queue_entries.c.job_id == c.id),
            )
            .values(status=JobStatus.PENDING.value, updated_at=as_datetime(epoch))
            .returning(
                c.id, c.tenant_id, c.queue, c.priority, c.ordering_key, c.attempts_made, c.send_at
            )
        )
        rows = (await conn.execute(still)).all()
        postgres = not self._db.is_sqlite
        keys = {(row.tenant_id, row.ordering_key) for row in rows if row.ordering_key}
        await lock_ordering_keys(conn, postgres, keys)
        for row in sorted(rows, key=lambda r: r.id):
            entry = entry_row(row._mapping, epoch)
            # The passes it already spent still count toward the dead-letter queue.
            entry["attempts"] = row.attempts_made
            await place(conn, postgres, entry, locked=True)
            await conn.execute(queue_entries.insert().values(**entry))
        return len(rows)

    async def entries_batch(
        self, after: str, limit: int, stale_before: float, *, mend: bool
    ) -> EntryBatch | None:
        """Up to ``limit`` entries with job ids above ``after``: those of terminal jobs,
        and leases that ran out before ``stale_before`` (epoch) on PROCESSING jobs; with
        ``mend`` the first are deleted, the second released. None: locked out."""
        e, j = queue_entries.c, jobs.c
        query = (
            select(e.job_id, e.tenant_id, e.ordering_key, e.claim_token, e.available_at, j.status)
            .join_from(queue_entries, jobs, j.id == e.job_id)
            .where(e.job_id > after)
            .order_by(e.job_id)
            .limit(limit)
        )
        async with self._db.transaction() as conn:
            if await self._locked_out(conn):
                return None
            rows = (await conn.execute(query)).all()
            terminal = [r for r in rows if r.status in _TERMINAL]
            stale = [r for r in rows if _stale(r, stale_before)]
            deleted = released = 0
            if mend:
                deleted = await self._delete_entries(conn, terminal)
                released = await self._release(conn, stale, stale_before)
        return EntryBatch(
            read=len(rows),
            last_id=rows[-1].job_id if rows else None,
            terminal=tuple(r.job_id for r in terminal),
            stale=tuple(r.job_id for r in stale),
            deleted=deleted,
            released=released,
        )

    async def _delete_entries(self, conn: AsyncConnection, rows: Sequence[Any]) -> int:
        if not rows:
            return 0
        keys = {(r.tenant_id, r.ordering_key) for r in rows if r.ordering_key is not None}
        await lock_ordering_keys(conn, not self._db.is_sqlite, keys)
        e = queue_entries.c
        terminal_job = exists().where(jobs.c.id == e.job_id, one_of(conn, jobs.c.status, _TERMINAL))
        result = await conn.execute(
            delete(queue_entries).where(
                one_of(conn, e.job_id, [r.job_id for r in rows]), terminal_job
            )
        )
        await release_next(conn, sorted(keys), self._clock.now())
        return int(result.rowcount)

    async def _release(
        self, conn: AsyncConnection, rows: Sequence[Any], stale_before: float
    ) -> int:
        released = 0
        now = as_datetime(self._clock.now())
        e = queue_entries.c
        for row in rows:
            # The token seen: a worker that claimed the entry meanwhile keeps it.
            entry = await conn.execute(
                update(queue_entries)
                .where(
                    e.job_id == row.job_id,
                    e.claim_token == row.claim_token,
                    e.available_at < stale_before,
                )
                .values(claim_token=None)
            )
            if entry.rowcount == 0:
                continue
            await conn.execute(
                update(jobs)
                .where(jobs.c.id == row.job_id, jobs.c.status == JobStatus.PROCESSING.value)
                .values(status=JobStatus.PENDING.value, updated_at=now)
            )
            released += 1
        return released


def _stale(row: Any, stale_before: float) -> bool:
    return (
        row.status == JobStatus.PROCESSING.value
        and row.claim_token is not None
        and row.available_at < stale_before
    )
