"""Rescheduling a job that waits: its queue entry's ``available_at``, its ``send_at``
and its ``expires_at`` move together, in one transaction (docs/scheduling.md).

The entry is moved first, conditionally (unclaimed: no claim token and no pass
made), so a reschedule racing a claim either wins whole or changes nothing: on
PostgreSQL the claim's ``FOR UPDATE SKIP LOCKED`` skips an entry this update holds,
and this update, waiting on an entry a claim holds, finds it claimed once the claim
commits; SQLite serialises the two.
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.errors import Forbidden, NotFound, NotReschedulable
from homing.models import Job, JobStatus
from homing.store.database import Database
from homing.store.rows import job_from_row
from homing.store.tables.core import jobs, queue_entries

__all__ = ["REQUESTED", "ScheduleStore"]

REQUESTED = "requested"


class ScheduleStore:
    """The SQL of moving a waiting job to another time."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def reschedule(
        self, tenant_id: str, job_id: str, send_at: float, now: float, *, test_only: bool = False
    ) -> Job:
        """Make the tenant's job due at ``send_at`` (not before ``now``): PENDING, never
        claimed, in no ordering key's line. Its ttl, which counts from when it is due,
        moves by as much. NotFound, Forbidden (a live job and a test key) or
        NotReschedulable otherwise."""
        q, c = queue_entries.c, jobs.c
        async with self._db.transaction() as conn:
            conditions = [c.id == job_id, c.tenant_id == tenant_id]
            if test_only:
                conditions.append(c.test.is_(True))
            query = select(c.send_at, c.created_at, c.expires_at, c.status, c.ordering_key)
            found = (await conn.execute(query.where(*conditions))).first()
            if found is None:
                raise await _not_found(conn, tenant_id, job_id, test_only)
            if found.status != JobStatus.PENDING.value or found.ordering_key is not None:
                raise _refused(found.status, found.ordering_key)
            moved = await conn.execute(
                update(queue_entries)
                .where(
                    q.job_id == job_id,
                    q.tenant_id == tenant_id,
                    q.claim_token.is_(None),
                    q.attempts == 0,
                )
                .values(available_at=send_at)
            )
            if moved.rowcount == 0:
                raise _refused(JobStatus.PROCESSING.value, None)
            start = (found.send_at or found.created_at).timestamp()
            expires = found.expires_at
            values = {
                "send_at": as_datetime(send_at),
                "schedule_reason": REQUESTED,
                "updated_at": as_datetime(now),
                "expires_at": None
                if expires is None
                else as_datetime(expires.timestamp() + send_at - start),
            }
            row = (
                await conn.execute(
                    update(jobs)
                    .where(c.id == job_id, c.status == JobStatus.PENDING.value)
                    .values(**values)
                    .returning(*jobs.c)
                )
            ).first()
            if row is None:  # never with the queue's invariant; rolled back all the same
                raise _refused(found.status, None)
        return job_from_row(row)


def _refused(status: str, ordering_key: str | None) -> NotReschedulable:
    if ordering_key is not None:
        return NotReschedulable(
            "a job with an ordering key goes when its turn comes; it cannot be rescheduled",
            {"status": status},
        )
    return NotReschedulable(
        "only a PENDING job no worker has claimed can be rescheduled", {"status": status}
    )


async def _not_found(
    conn: AsyncConnection, tenant_id: str, job_id: str, test_only: bool
) -> NotFound | Forbidden:
    if test_only:
        query = select(jobs.c.id).where(jobs.c.id == job_id, jobs.c.tenant_id == tenant_id)
        if (await conn.execute(query)).first() is not None:
            return Forbidden(
                "this job was sent with a live key; rescheduling it needs a live API key"
            )
    return NotFound("job not found")
