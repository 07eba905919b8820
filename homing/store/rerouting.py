"""Outcome-driven fallback: a job the provider accepted, then could not deliver because
of the route (carrier filtering, an unknown destination), continues at the next
provider when it asked to (``"fallback_on_undelivered": true``).

It runs inside the transaction that applies the provider's event: the job goes back to
PENDING with a new queue entry, the provider that accepted it is skipped for the rest
of the job, and an attempt row gives the reason in the job's trail. Only the send the
event is about moves it (the job's current provider message id), only a COMPLETED job
without an ordering key, and each provider at most once, since it is then skipped.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import as_datetime
from homing.models import Attempt, AttemptOutcome, DeliveryEvent, JobStatus
from homing.store.accepting import entry_row
from homing.store.rows import attempt_to_row
from homing.store.tables.core import attempts, jobs, queue_entries

REROUTED_ERROR_CLASS = "undelivered"
FALLBACK_FIELD = "fallback_on_undelivered"


def wants_reroute(job: Any, event: DeliveryEvent) -> bool:
    """Whether ``event`` sends this job (a row of ``jobs``) on to its next provider."""
    payload = job.payload if isinstance(job.payload, dict) else {}
    return (
        event.reroute is not None
        and payload.get(FALLBACK_FIELD) is True
        and job.status == JobStatus.COMPLETED.value
        and job.ordering_key is None
        and job.provider_message_id is not None
        and job.provider_message_id in event.message_ids
    )


async def _accepting_account(conn: AsyncConnection, job_id: str) -> str | None:
    c = attempts.c
    query = (
        select(c.provider_account_id)
        .where(c.job_id == job_id, c.outcome == AttemptOutcome.SUCCESS.value)
        .order_by(c.started_at.desc(), c.id.desc())
        .limit(1)
    )
    return (await conn.execute(query)).scalar()


async def reroute(conn: AsyncConnection, job: Any, event: DeliveryEvent, epoch: float) -> None:
    """Put ``job`` back on its queue, skipping the provider that accepted it."""
    account_id = await _accepting_account(conn, job.id)
    now = as_datetime(epoch)
    reason = f"{job.provider}: undelivered after it was accepted ({event.reroute}); "
    reason += "continuing at the next provider"
    trail = Attempt(
        job_id=job.id,
        tenant_id=job.tenant_id,
        number=job.attempts_made,
        provider_account_id=account_id,
        provider=job.provider or "",
        outcome=AttemptOutcome.PROVIDER_PERMANENT,
        status_code=None,
        error=reason,
        started_at=now,
        duration_ms=0,
    )
    await conn.execute(attempts.insert(), [attempt_to_row(trail)])
    skipped = list(job.skipped_providers or [])
    if account_id is not None and account_id not in skipped:
        skipped.append(account_id)
    changed = await conn.execute(
        update(jobs)
        .where(jobs.c.id == job.id, jobs.c.status == JobStatus.COMPLETED.value)
        .values(
            status=JobStatus.PENDING.value,
            skipped_providers=skipped,
            error=reason,
            error_class=REROUTED_ERROR_CLASS,
            updated_at=now,
            completed_at=None,
        )
    )
    if changed.rowcount == 0:
        return
    entry = entry_row(
        {
            "id": job.id,
            "tenant_id": job.tenant_id,
            "queue": job.queue,
            "priority": job.priority,
            "ordering_key": None,
            "send_at": None,  # due again now: the provider refused the route it took
        },
        epoch,
    )
    await conn.execute(queue_entries.insert().values(**{**entry, "attempts": job.attempts_made}))
