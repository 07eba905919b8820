"""Jobs as the tenant sees them: accept (the transactional outbox), read, retry."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.errors import Conflict, IdempotencyConflict, NotFound
from homing.models import (
    Attempt,
    Channel,
    DeliveryMode,
    Job,
    JobStatus,
    Priority,
    Queue,
    new_id,
)
from homing.plans import Quota, month_of
from homing.store.database import Database
from homing.store.ordering import place
from homing.store.rows import attempt_from_row, job_from_row
from homing.store.schema import attempts, dead_letters, jobs, queue_entries
from homing.store.suppressions import suppress_row
from homing.store.usage import charge

# A rule the accepting transaction checks before it stores a new job (not on a
# replay); it raises to refuse. Run inside the transaction: no extra round trip.
AcceptCheck = Callable[[AsyncConnection], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class NewJob:
    tenant_id: str
    channel: Channel
    queue: Queue
    priority: Priority
    payload: dict[str, Any]
    delivery: DeliveryMode = DeliveryMode.AT_LEAST_ONCE
    provider_pin: str | None = None
    fallback_pin: str | None = None
    idempotency_key: str | None = None
    request_hash: str | None = None
    test: bool = False
    ordering_key: str | None = None


@dataclass(frozen=True, slots=True)
class Accepted:
    job: Job
    replayed: bool


@dataclass(frozen=True, slots=True)
class JobPage:
    jobs: list[Job]
    next_cursor: str | None


class JobStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def accept(
        self, new: NewJob, quotas: Sequence[Quota] = (), check: AcceptCheck | None = None
    ) -> Accepted:
        """Store the job and its queue entry in one transaction, or replay a prior one.

        The same Idempotency-Key with the same request hash returns the original job;
        with a different hash it raises IdempotencyConflict. A concurrent duplicate
        loses the unique-constraint race and is answered from the winner's row.
        A new job is counted in the month's usage in the same transaction; when one of
        ``quotas`` would overflow, QuotaExceeded and nothing is stored. A replay is
        not counted.
        """
        try:
            async with self._db.transaction() as conn:
                prior = await self._by_idempotency_key(conn, new)
                if prior is not None:
                    return replay(prior, new)
                if check is not None:
                    await check(conn)
                job = await self._insert(conn, new)
                if job.status is JobStatus.SUPPRESSED:
                    # Suppressed recipient (homing.store.suppressions): no queue entry,
                    # no quota.
                    return Accepted(job=job, replayed=False)
                # Last, so a hot counter row stays locked only until the commit.
                period = month_of(self._clock.now())
                await charge(conn, new.tenant_id, new.channel, 1, quotas, period)
            return Accepted(job=job, replayed=False)
        except IntegrityError:
            if new.idempotency_key is None:
                raise
            async with self._db.transaction() as conn:
                prior = await self._by_idempotency_key(conn, new)
            if prior is None:
                raise
            return replay(prior, new)

    async def _by_idempotency_key(self, conn: AsyncConnection, new: NewJob) -> Any:
        if new.idempotency_key is None:
            return None
        query = select(jobs).where(
            jobs.c.tenant_id == new.tenant_id, jobs.c.idempotency_key == new.idempotency_key
        )
        return (await conn.execute(query)).first()

    async def _insert(self, conn: AsyncConnection, new: NewJob) -> Job:
        epoch = self._clock.now()
        row = job_row(new, epoch)
        suppressed = await suppress_row(conn, row)
        # Rows as parameters, not .values(): the compiled INSERT is reused from cache.
        await conn.execute(jobs.insert(), row)
        if suppressed:
            return job_from_row(_Row(row))
        entry = entry_row(row, epoch)
        await place(conn, not self._db.is_sqlite, entry)
        await conn.execute(queue_entries.insert(), entry)
        return job_from_row(_Row(row))

    async def get(self, tenant_id: str, job_id: str) -> tuple[Job, list[Attempt]]:
        """The job with its attempts, oldest first; another tenant's job is NotFound."""
        async with self._db.transaction() as conn:
            row = (
                await conn.execute(
                    select(jobs).where(jobs.c.id == job_id, jobs.c.tenant_id == tenant_id)
                )
            ).first()
            if row is None:
                raise NotFound("job not found")
            attempt_rows = (
                await conn.execute(
                    select(attempts)
                    .where(attempts.c.job_id == job_id, attempts.c.tenant_id == tenant_id)
                    .order_by(attempts.c.started_at, attempts.c.id)
                )
            ).all()
        return job_from_row(row), [attempt_from_row(a) for a in attempt_rows]

    async def page(
        self,
        tenant_id: str,
        *,
        status: JobStatus | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> JobPage:
        """Newest first; ``cursor`` is the id of the last job of the previous page."""
        query = select(jobs).where(jobs.c.tenant_id == tenant_id)
        if status is not None:
            query = query.where(jobs.c.status == status.value)
        if cursor is not None:
            query = query.where(jobs.c.id < cursor)
        query = query.order_by(jobs.c.id.desc()).limit(limit + 1)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        page = [job_from_row(row) for row in rows[:limit]]
        next_cursor = page[-1].id if len(rows) > limit else None
        return JobPage(jobs=page, next_cursor=next_cursor)

    async def retry(self, tenant_id: str, job_id: str) -> Job:
        """Put a FAILED job back on its queue with fresh attempts.

        The status change is conditional (``WHERE status = 'FAILED'``), so of two
        concurrent retries exactly one re-queues the job; the other gets Conflict.
        """
        epoch = self._clock.now()
        now = as_datetime(epoch)
        async with self._db.transaction() as conn:
            result = await conn.execute(
                update(jobs)
                .where(
                    jobs.c.id == job_id,
                    jobs.c.tenant_id == tenant_id,
                    jobs.c.status == JobStatus.FAILED.value,
                )
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
                raise await self._missing_or_conflict(conn, tenant_id, job_id)
            await conn.execute(delete(queue_entries).where(queue_entries.c.job_id == job_id))
            entry = entry_row(row._mapping, epoch)
            await place(conn, not self._db.is_sqlite, entry)
            await conn.execute(queue_entries.insert().values(**entry))
            await conn.execute(
                update(dead_letters)
                .where(dead_letters.c.job_id == job_id, dead_letters.c.redriven_at.is_(None))
                .values(redriven_at=now)
            )
        return job_from_row(row)

    async def _missing_or_conflict(
        self, conn: AsyncConnection, tenant_id: str, job_id: str
    ) -> NotFound | Conflict:
        query = select(jobs.c.status).where(jobs.c.id == job_id, jobs.c.tenant_id == tenant_id)
        status = (await conn.execute(query)).scalar()
        if status is None:
            return NotFound("job not found")
        return Conflict(
            f"only FAILED jobs can be retried; this job is {status}", {"status": status}
        )


def job_row(new: NewJob, epoch: float) -> dict[str, Any]:
    """The ``jobs`` row of a newly accepted job."""
    now = as_datetime(epoch)
    return {
        "id": new_id(),
        "tenant_id": new.tenant_id,
        "channel": new.channel.value,
        "queue": new.queue.value,
        "status": JobStatus.PENDING.value,
        # Homing's own mail always goes first (DESIGN §4).
        "priority": int(Priority.CRITICAL if new.queue is Queue.PLATFORM_EMAIL else new.priority),
        "payload": new.payload,
        "delivery": new.delivery.value,
        "provider_pin": new.provider_pin,
        "fallback_pin": new.fallback_pin,
        "idempotency_key": new.idempotency_key,
        "request_hash": new.request_hash,
        "attempts_made": 0,
        "skipped_providers": [],
        "provider": None,
        "provider_message_id": None,
        "error": None,
        "error_class": None,
        "created_at": now,
        "updated_at": now,
        "completed_at": None,
        "test": new.test,
        "ordering_key": new.ordering_key,
    }


def entry_row(job_row: Any, epoch: float) -> dict[str, Any]:
    """The ``queue_entries`` row that makes a job claimable at ``epoch``."""
    return {
        "job_id": job_row["id"],
        "tenant_id": job_row["tenant_id"],
        "queue": job_row["queue"],
        "priority": job_row["priority"],
        "available_at": epoch,
        "attempts": 0,
        "deferred_seconds": 0.0,
        "claim_token": None,
        "created_at": epoch,
        "ordering_key": job_row.get("ordering_key"),
        "seq": None,
    }


def replay(prior: Any, new: NewJob) -> Accepted:
    """The prior job for a repeated Idempotency-Key, or IdempotencyConflict."""
    if prior.request_hash != new.request_hash:
        raise IdempotencyConflict(
            "this Idempotency-Key was already used with a different request",
            {"job_id": prior.id},
        )
    return Accepted(job=job_from_row(prior), replayed=True)


class _Row:
    """Attribute access over a dict, so a freshly inserted row maps like a fetched one."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)
