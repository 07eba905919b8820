"""The queue's SQL: claim under lease, and record what a worker did, in batches.

A claim moves ``available_at`` to the end of the lease and bumps the pass counter
(the entry's ``attempts`` column) in the same statement, so a worker that dies simply
lets the lease run out and the entry is claimed again, one pass closer to the
dead-letter queue.
PostgreSQL claims with ``FOR UPDATE SKIP LOCKED``; SQLite needs no row locks
because its writes are serialised (``BEGIN IMMEDIATE`` on one connection).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import bindparam, delete, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.crypto import AddressRefs
from homing.domain.queue import Applied, Completed, Failed, Outcome, Rescheduled
from homing.models import AttemptOutcome, ClaimedJob, JobStatus, Queue, new_id
from homing.store.claiming import Claim, ready
from homing.store.database import Database
from homing.store.ordering import lock_ordering_keys, release_next
from homing.store.picking import FairPicker
from homing.store.rows import attempt_to_row, job_from_row
from homing.store.suppressions import add_suppression, address_key_of
from homing.store.tables.core import attempts, dead_letters, jobs, queue_entries, tenants


class QueueStore:
    """The queue's SQL: claims due entries with a lease and a claim token, fairly across
    tenants and in order per ordering key; renews leases; applies outcomes."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        *,
        tenant_inflight: int,
        refs: AddressRefs | None = None,
    ) -> None:
        self._db = db
        self._clock = clock
        self._refs = refs
        self._picker = FairPicker(postgres=not db.is_sqlite, tenant_inflight=tenant_inflight)

    async def claim_ready(self, queues: Sequence[Queue], limit: int, lease_seconds: float) -> Claim:
        """Lease up to ``limit`` due entries from the first of ``queues``, in this
        order, that has due entries: priority first, tenants round-robin, none past a
        tenant's in-flight cap (homing.store.picking); an empty queue costs one query,
        not a transaction of its own (a worker serves five queues, most of them empty).
        In the same transaction, what starting the jobs needs: the suppressed among them
        ended, their tenants' accounts and suspensions (homing.store.claiming). One
        transaction per claim round, not four."""
        epoch = self._clock.now()
        async with self._db.transaction() as conn:
            claimed, suspended = await self._claim_in(conn, queues, limit, epoch, lease_seconds)
            if not claimed:
                return Claim()
            return await ready(conn, claimed, suspended, epoch, self._refs)

    async def _claim_in(
        self,
        conn: AsyncConnection,
        queues: Sequence[Queue],
        limit: int,
        epoch: float,
        lease_seconds: float,
    ) -> tuple[list[ClaimedJob], set[str]]:
        spans = await self._picker.spans(conn, [q.value for q in queues])
        for queue in (q for q in queues if q.value in spans):
            picked = await self._picker.pick(conn, queue.value, spans[queue.value], limit, epoch)
            if picked:
                return await self._lease(conn, picked, new_id(), epoch, lease_seconds)
        return [], set()

    async def _lease(
        self,
        conn: AsyncConnection,
        picked: list[str],
        token: str,
        epoch: float,
        lease_seconds: float,
    ) -> tuple[list[ClaimedJob], set[str]]:
        """Lease the picked entries; the claimed jobs, and which of their tenants are
        suspended (read with the jobs, by the same statement)."""
        claim = (
            update(queue_entries)
            .where(queue_entries.c.job_id.in_(picked))
            .values(
                available_at=epoch + lease_seconds,
                attempts=queue_entries.c.attempts + 1,
                claim_token=token,
            )
            .returning(
                queue_entries.c.job_id,
                queue_entries.c.attempts,
                queue_entries.c.deferred_seconds,
                queue_entries.c.provider_calls,
            )
        )
        claimed = {row.job_id: row for row in (await conn.execute(claim)).all()}
        # UPDATE … RETURNING: the jobs as they are now, without a SELECT of their own.
        rows = (
            await conn.execute(
                update(jobs)
                .where(jobs.c.id.in_(list(claimed)))
                .values(status=JobStatus.PROCESSING.value, updated_at=as_datetime(epoch))
                .returning(*jobs.c, _SUSPENDED)
            )
        ).all()
        suspended = {row.tenant_id for row in rows if row.tenant_suspended}
        leased = [
            ClaimedJob(
                job=job_from_row(row),
                claim_token=token,
                pass_number=claimed[row.id].attempts,
                deferred_seconds=claimed[row.id].deferred_seconds,
                provider_calls=claimed[row.id].provider_calls,
            )
            for row in sorted(rows, key=lambda r: (r.priority, r.id))
        ]
        return leased, suspended

    async def apply(self, outcomes: Sequence[Outcome]) -> Applied:
        """Record a batch of outcomes in one transaction."""
        applied = Applied()
        if not outcomes:
            return applied
        epoch = self._clock.now()
        now = as_datetime(epoch)
        attempt_rows = [attempt_to_row(a) for outcome in outcomes for a in outcome.attempts]
        async with self._db.transaction() as conn:
            ordered = await self._ordering_keys(conn, outcomes)
            if attempt_rows:
                await conn.execute(attempts.insert(), attempt_rows)
            await _complete(conn, [o for o in outcomes if isinstance(o, Completed)], now)
            for outcome in outcomes:
                if isinstance(outcome, Completed):
                    continue
                if isinstance(outcome, Rescheduled):
                    held = await _reschedule(conn, outcome, now)
                else:
                    held = await _dead_letter(conn, outcome, now)
                    if held:
                        applied.dead_lettered.append(
                            (outcome.job_id, outcome.error_class, outcome.error)
                        )
                if not held:
                    applied.lost_leases.append(outcome.job_id)
                    ordered.pop(outcome.job_id, None)
            await release_next(conn, set(ordered.values()), epoch)
        return applied

    async def _ordering_keys(
        self, conn: AsyncConnection, outcomes: Sequence[Outcome]
    ) -> dict[str, tuple[str, str]]:
        """(tenant, ordering key) of each job this batch may finish, locked."""
        finishing = [o.job_id for o in outcomes if not isinstance(o, Rescheduled)]
        if not finishing:
            return {}
        query = select(jobs.c.id, jobs.c.tenant_id, jobs.c.ordering_key).where(
            jobs.c.id.in_(finishing), jobs.c.ordering_key.is_not(None)
        )
        keys = {row.id: (row.tenant_id, row.ordering_key) for row in await conn.execute(query)}
        await lock_ordering_keys(conn, not self._db.is_sqlite, keys.values())
        return keys

    async def renew(self, held: Mapping[str, str], lease_seconds: float) -> set[str]:
        """Extend the leases of these claimed jobs (job id -> claim token) to
        ``lease_seconds`` from now, in one statement; the ids whose claim is gone
        (finished, or taken by another worker after the lease ran out) are not in
        the answer."""
        if not held:
            return set()
        epoch = self._clock.now()
        pairs = list(held.items())
        renewal = (
            update(queue_entries)
            .where(tuple_(queue_entries.c.job_id, queue_entries.c.claim_token).in_(pairs))
            .values(available_at=epoch + lease_seconds)
            .returning(queue_entries.c.job_id)
        )
        async with self._db.transaction() as conn:
            return {row.job_id for row in (await conn.execute(renewal)).all()}


# Whether the job's tenant is suspended, beside each claimed job (SQLite's RETURNING
# may not name another table, but may hold a subquery).
_SUSPENDED = (
    select(tenants.c.suspended)
    .where(tenants.c.id == jobs.c.tenant_id)
    .scalar_subquery()
    .label("tenant_suspended")
)

_COMPLETE = (
    update(jobs)
    .where(jobs.c.id == bindparam("b_id"))
    .values(
        status=JobStatus.COMPLETED.value,
        provider=bindparam("b_provider"),
        provider_message_id=bindparam("b_message_id"),
        attempts_made=bindparam("b_passes"),
        error=None,
        error_class=None,
        updated_at=bindparam("b_now"),
        completed_at=bindparam("b_now"),
    )
)


async def _complete(conn: AsyncConnection, done: Sequence[Completed], now: Any) -> None:
    """Finish many jobs with two statements (one DELETE, one executemany UPDATE)."""
    if not done:
        return
    # A success is a fact even if the lease was lost meanwhile: it wins.
    ids = [o.job_id for o in done]
    removed = await conn.execute(
        delete(queue_entries)
        .where(queue_entries.c.job_id.in_(ids))
        .returning(queue_entries.c.job_id, queue_entries.c.claim_token)
    )
    held = {(row.job_id, row.claim_token) for row in removed}
    late = [o for o in done if (o.job_id, o.claim_token) not in held]
    if late:
        await _undo_fence(conn, late)
    params = [
        {
            "b_id": o.job_id,
            "b_provider": o.provider,
            "b_message_id": o.provider_message_id,
            "b_passes": o.passes_made,
            "b_now": now,
        }
        for o in done
    ]
    await conn.execute(_COMPLETE, params)


async def _undo_fence(conn: AsyncConnection, late: Sequence[Completed]) -> None:
    """A success recorded after its lease ran out (a worker that kept it through a
    database outage longer than the lease): the claim after it may have ended the job
    FAILED ``uncertain`` with its call as ``unknown`` (homing.dispatch.unaccounted).
    The call is known now: that unknown attempt and the dead letter (not redriven)
    go, and the job is COMPLETED by the caller. Rare, so it costs nothing otherwise."""
    for outcome in late:
        numbers = {a.number for a in outcome.attempts}
        await conn.execute(
            delete(attempts).where(
                attempts.c.job_id == outcome.job_id,
                attempts.c.outcome == AttemptOutcome.UNKNOWN.value,
                attempts.c.number.in_(sorted(numbers)),
            )
        )
        await conn.execute(
            delete(dead_letters).where(
                dead_letters.c.job_id == outcome.job_id, dead_letters.c.redriven_at.is_(None)
            )
        )


def _held(outcome: Rescheduled | Failed) -> Any:
    """The entry this outcome's claim still holds: a stale claim matches no row."""
    return (queue_entries.c.job_id == outcome.job_id) & (
        queue_entries.c.claim_token == outcome.claim_token
    )


async def _reschedule(conn: AsyncConnection, outcome: Rescheduled, now: Any) -> bool:
    """Put the job back on the queue; False (and nothing written) if the claim is gone."""
    values: dict[str, Any] = {
        "available_at": outcome.available_at,
        "claim_token": None,
        "deferred_seconds": queue_entries.c.deferred_seconds + outcome.deferred_seconds,
        "provider_calls": queue_entries.c.provider_calls + outcome.provider_calls,
    }
    if outcome.refund:
        values["attempts"] = queue_entries.c.attempts - 1
    entry = await conn.execute(update(queue_entries).where(_held(outcome)).values(**values))
    if entry.rowcount == 0:
        return False
    await conn.execute(
        update(jobs)
        .where(jobs.c.id == outcome.job_id)
        .values(
            status=JobStatus.PENDING.value,
            attempts_made=outcome.passes_made,
            skipped_providers=list(outcome.skipped_providers),
            error=outcome.error,
            error_class=outcome.error_class,
            updated_at=now,
        )
    )
    return True


async def _dead_letter(conn: AsyncConnection, outcome: Failed, now: Any) -> bool:
    """Fail the job into the dead-letter queue; False (nothing written) if the claim is gone."""
    entry = await conn.execute(delete(queue_entries).where(_held(outcome)))
    if entry.rowcount == 0:
        return False
    # The dead letter's provider is the job's last one (the console filters on it): the
    # last this pass tried, or whichever an earlier write left when it tried none.
    last = {"provider": outcome.attempts[-1].provider} if outcome.attempts else {}
    row = (
        await conn.execute(
            update(jobs)
            .where(jobs.c.id == outcome.job_id)
            .values(
                status=JobStatus.FAILED.value,
                attempts_made=outcome.passes_made,
                skipped_providers=list(outcome.skipped_providers),
                error=outcome.error,
                error_class=outcome.error_class,
                updated_at=now,
                completed_at=now,
                **last,
            )
            .returning(jobs.c.tenant_id, jobs.c.queue, jobs.c.channel, jobs.c.payload)
        )
    ).one()
    address = address_key_of(row.channel, row.payload) if outcome.suppress else None
    if address is not None:
        await add_suppression(
            conn,
            {
                "tenant_id": row.tenant_id,
                "channel": row.channel,
                "address": address,
                "reason": outcome.suppress,
                "source": "provider",
                "created_at": now,
            },
        )
    await conn.execute(
        dead_letters.insert().values(
            id=new_id(),
            job_id=outcome.job_id,
            tenant_id=row.tenant_id,
            queue=row.queue,
            payload=row.payload,
            error=outcome.error,
            error_class=outcome.error_class,
            created_at=now,
        )
    )
    return True
