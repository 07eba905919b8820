"""Jobs as the tenant sees them: accept (the transactional outbox), read, retry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import delete, exists, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.channels import Channel
from homing.clock import Clock, as_datetime, month_of
from homing.crypto import AddressRefs
from homing.domain.accepting import Accepted, NewJob
from homing.domain.job_search import JobFilter
from homing.errors import Conflict, Forbidden, NotFound
from homing.models import Attempt, Job, JobStatus, Quota
from homing.store.accepting import AcceptCheck, AcceptGroups, TraceReader, entry_row, untraced
from homing.store.database import Database
from homing.store.job_search import JobPage, search
from homing.store.ordering import lock_ordering_keys, place, release_next
from homing.store.queue_view import (
    Claimable,
    QueueView,
    TenantDepth,
    claimable,
    queue_view,
    tenant_depths,
)
from homing.store.rows import attempt_from_row, job_from_row
from homing.store.tables.core import attempts, dead_letters, jobs, queue_entries
from homing.store.usage import charge

# The quotas that apply to a job of a channel (``Limits.quotas_for``).
QuotasFor = Callable[[Channel], Sequence[Quota]]


def _no_quotas(channel: Channel) -> Sequence[Quota]:
    return ()


class JobStore:
    """The SQL of jobs: accept one, read, page, and retry a dead-lettered job with a
    conditional update."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        refs: AddressRefs | None = None,
        *,
        trace: TraceReader = untraced,
    ) -> None:
        """``trace``: what a new job's traceparent is read from (homing.tracing)."""
        self._db = db
        self._clock = clock
        self._groups = AcceptGroups(db, clock, refs=refs, trace=trace)

    async def accept(
        self, new: NewJob, quotas: Sequence[Quota] = (), check: AcceptCheck | None = None
    ) -> Accepted:
        """Store the job and its queue entry in one transaction, or replay a prior one.

        The same Idempotency-Key with the same request hash returns the original job;
        with a different hash it raises IdempotencyConflict. A concurrent duplicate
        loses the unique-constraint race and is answered from the winner's row.
        A new job is counted in the month's usage in the same transaction; when one of
        ``quotas`` would overflow, QuotaExceeded and nothing is stored. A replay is
        not counted. ``check`` may refuse a new job (it raises). Accepts that wait at
        the same moment share a transaction (``homing.store.accepting``).
        """
        return await self._groups.accept(new, quotas, check)

    async def get(
        self, tenant_id: str, job_id: str, *, test_only: bool = False
    ) -> tuple[Job, list[Attempt]]:
        """The job with its attempts, oldest first; another tenant's job is NotFound, and
        so is a live job when ``test_only`` (a test key reads only test jobs)."""
        query = select(jobs).where(jobs.c.id == job_id, jobs.c.tenant_id == tenant_id)
        if test_only:
            query = query.where(jobs.c.test.is_(True))
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
            if row is None:
                raise NotFound("job not found")
            attempt_rows = (
                await conn.execute(
                    select(attempts)
                    .where(attempts.c.job_id == job_id, attempts.c.tenant_id == tenant_id)
                    .order_by(attempts.c.started_at, attempts.c.id)
                )
            ).all()
        # Read here only, not by the claim or the accept: a job page says when
        # retention scrubbed the payload.
        job = replace(job_from_row(row), payload_scrubbed_at=row.payload_scrubbed_at)
        return job, [attempt_from_row(a) for a in attempt_rows]

    async def page(
        self, found: JobFilter, *, limit: int = 50, cursor: str | None = None
    ) -> JobPage:
        """Newest first, the jobs ``found`` matches (``homing.store.job_search``);
        ``cursor`` is the id of the last job of the previous page."""
        async with self._db.transaction() as conn:
            return await search(conn, found, limit, cursor)

    async def last_attempts(self, tenant_id: str, job_ids: Sequence[str]) -> dict[str, Attempt]:
        """The latest attempt of each of the tenant's jobs ``job_ids`` that has one (one
        query; for a page of jobs, so ``job_ids`` is a page's worth)."""
        if not job_ids:
            return {}
        query = (
            select(attempts)
            .where(attempts.c.tenant_id == tenant_id, attempts.c.job_id.in_(list(job_ids)))
            .order_by(attempts.c.started_at, attempts.c.id)
        )
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return {row.job_id: attempt_from_row(row) for row in rows}

    async def queues(self) -> QueueView:
        """The queue's depth by queue, priority and state, and the busiest tenants
        (``homing.store.queue_view``)."""
        async with self._db.transaction() as conn:
            return await queue_view(conn, self._clock.now())

    async def tenant_depths(self, limit: int) -> list[TenantDepth]:
        """The largest claimable backlogs by tenant, queue and priority
        (``homing.store.queue_view``)."""
        async with self._db.transaction() as conn:
            return await tenant_depths(conn, self._clock.now(), limit)

    async def claimable(self) -> list[Claimable]:
        """Claimable entries now by queue and priority (``homing.store.queue_view``)."""
        async with self._db.transaction() as conn:
            return await claimable(conn, self._clock.now())

    async def retry(
        self,
        tenant_id: str,
        job_id: str,
        quotas: QuotasFor = _no_quotas,
        *,
        test_only: bool = False,
    ) -> Job:
        """Put a FAILED job back on its queue with fresh passes.

        The status change is conditional (``WHERE status = 'FAILED'``), so of two
        concurrent retries exactly one re-queues the job; the other gets Conflict. A
        retry sends again, so it is counted in the month's usage like a new accept, in
        the same transaction: over one of ``quotas(channel)`` it raises QuotaExceeded
        and the job stays FAILED. ``test_only`` (a test key) re-queues only a test job;
        a live one is Forbidden. A job whose payload retention scrubbed is a Conflict.
        """
        epoch = self._clock.now()
        now = as_datetime(epoch)
        c = jobs.c
        conditions = [c.id == job_id, c.tenant_id == tenant_id, c.status == JobStatus.FAILED.value]
        # Retention scrubbed its bodies: sending it again would send the marker.
        conditions.append(c.payload_scrubbed_at.is_(None))
        if test_only:
            conditions.append(c.test.is_(True))
        async with self._db.transaction() as conn:
            result = await conn.execute(
                update(jobs)
                .where(*conditions)
                .values(
                    status=JobStatus.PENDING.value,
                    attempts_made=0,
                    skipped_providers=[],
                    error=None,
                    error_class=None,
                    completed_at=None,
                    updated_at=now,
                )
                .returning(*jobs.c)
            )
            row = result.first()
            if row is None:
                raise await self._not_retried(conn, tenant_id, job_id, test_only)
            channel = Channel(row.channel)
            await charge(conn, tenant_id, channel, 1, quotas(channel), month_of(epoch))
            await self._requeue(conn, row._mapping, epoch, now)
        return job_from_row(row)

    async def cancel(self, tenant_id: str, job_id: str, *, test_only: bool = False) -> Job:
        """Withdraw a job no worker holds: PENDING with an unleased queue entry becomes
        CANCELLED and loses its entry, in one transaction.

        Both writes are conditional and the entry goes first (the order a claim locks
        in), so a cancel racing a claim, or another cancel, either wins whole or
        changes nothing: Conflict when a worker holds the job or it is terminal,
        NotFound for another tenant's, Forbidden for a live job and a test key. The
        next job of its ordering key is released.
        """
        epoch = self._clock.now()
        now = as_datetime(epoch)
        q, c = queue_entries.c, jobs.c
        async with self._db.transaction() as conn:
            key = (
                await conn.execute(
                    select(c.ordering_key).where(c.id == job_id, c.tenant_id == tenant_id)
                )
            ).first()
            if key is not None and key.ordering_key is not None:
                await lock_ordering_keys(
                    conn, not self._db.is_sqlite, [(tenant_id, key.ordering_key)]
                )
            await conn.execute(
                delete(queue_entries).where(
                    q.job_id == job_id, q.tenant_id == tenant_id, q.claim_token.is_(None)
                )
            )
            conditions = [c.id == job_id, c.tenant_id == tenant_id]
            conditions.append(c.status == JobStatus.PENDING.value)
            if test_only:
                conditions.append(c.test.is_(True))
            # A PENDING job keeps an entry only while a claim holds it: not ours to cancel.
            conditions.append(~exists().where(q.job_id == job_id))
            row = (
                await conn.execute(
                    update(jobs)
                    .where(*conditions)
                    .values(status=JobStatus.CANCELLED.value, updated_at=now, completed_at=now)
                    .returning(*jobs.c)
                )
            ).first()
            if row is None:
                # Raised inside the transaction: the entry deleted above is restored.
                raise await self._not_cancelled(conn, tenant_id, job_id, test_only)
            if row.ordering_key is not None:
                await release_next(conn, [(tenant_id, row.ordering_key)], epoch)
        return job_from_row(row)

    async def _not_cancelled(
        self, conn: AsyncConnection, tenant_id: str, job_id: str, test_only: bool
    ) -> NotFound | Conflict | Forbidden:
        query = select(jobs.c.status, jobs.c.test).where(
            jobs.c.id == job_id, jobs.c.tenant_id == tenant_id
        )
        found = (await conn.execute(query)).first()
        if found is None:
            return NotFound("job not found")
        status, test = found
        if test_only and not test:
            return Forbidden(
                "this job was sent with a live key; cancelling it needs a live API key"
            )
        if status in (JobStatus.PENDING.value, JobStatus.PROCESSING.value):
            return Conflict(
                "a worker holds this job; it can no longer be cancelled",
                {"status": JobStatus.PROCESSING.value},
            )
        return Conflict(
            f"only PENDING jobs can be cancelled; this job is {status}", {"status": status}
        )

    async def _requeue(self, conn: AsyncConnection, row: Any, epoch: float, now: datetime) -> None:
        job_id = row["id"]
        await conn.execute(delete(queue_entries).where(queue_entries.c.job_id == job_id))
        entry = entry_row(row, epoch)
        await place(conn, not self._db.is_sqlite, entry)
        await conn.execute(queue_entries.insert().values(**entry))
        await conn.execute(
            update(dead_letters)
            .where(dead_letters.c.job_id == job_id, dead_letters.c.redriven_at.is_(None))
            .values(redriven_at=now)
        )

    async def _not_retried(
        self, conn: AsyncConnection, tenant_id: str, job_id: str, test_only: bool
    ) -> NotFound | Conflict | Forbidden:
        query = select(jobs.c.status, jobs.c.test, jobs.c.payload_scrubbed_at).where(
            jobs.c.id == job_id, jobs.c.tenant_id == tenant_id
        )
        found = (await conn.execute(query)).first()
        if found is None:
            return NotFound("job not found")
        status, test, scrubbed_at = found
        if test_only and not test:
            return Forbidden("this job was sent with a live key; retrying it needs a live API key")
        if scrubbed_at is not None and status == JobStatus.FAILED.value:
            return Conflict(
                "this job's payload was removed by retention; it cannot be sent again",
                {"status": status},
            )
        return Conflict(
            f"only FAILED jobs can be retried; this job is {status}", {"status": status}
        )
