"""Leases are renewed by the claim that holds them, and a stale claim never writes;
on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import func, select

from homing.channels import Channel
from homing.clock import ManualClock
from homing.domain.accepting import NewJob
from homing.domain.queue import Failed, Rescheduled
from homing.models import ClaimedJob, JobStatus, Plan, Priority, Queue
from homing.services import Services
from homing.store.tables.core import dead_letters, queue_entries
from tests.store_helpers import claim

LEASE = 30.0


def _new(tenant_id: str) -> NewJob:
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload={"to": "a@example.com", "from": "b@example.com", "subject": "s", "text": "t"},
    )


async def _reclaimed(services: Services, clock: ManualClock) -> tuple[str, ClaimedJob, ClaimedJob]:
    """A job claimed once, its lease run out, and claimed again: (tenant, stale, new)."""
    tenant, _ = await services.tenants.create("t", Plan.STARTUP)
    await services.jobs.accept(_new(tenant.id))
    stale = (await claim(services.queue, Queue.EMAIL, 1, LEASE))[0]
    clock.advance(LEASE + 1)
    new = (await claim(services.queue, Queue.EMAIL, 1, LEASE))[0]
    assert new.claim_token != stale.claim_token
    return tenant.id, stale, new


async def _entry(services: Services, job_id: str) -> tuple[object, ...]:
    query = select(
        queue_entries.c.available_at, queue_entries.c.attempts, queue_entries.c.claim_token
    ).where(queue_entries.c.job_id == job_id)
    async with services.db.transaction() as conn:
        return tuple((await conn.execute(query)).one())


async def _dead_letters(services: Services) -> int:
    async with services.db.transaction() as conn:
        return int(
            (await conn.execute(select(func.count()).select_from(dead_letters))).scalar_one()
        )


async def test_a_stale_reschedule_changes_nothing(services: Services, clock: ManualClock) -> None:
    tenant_id, stale, new = await _reclaimed(services, clock)
    before = await _entry(services, new.job.id)
    applied = await services.queue.apply(
        [
            Rescheduled(
                job_id=stale.job.id,
                claim_token=stale.claim_token,
                attempts=(),
                available_at=clock.now(),
                passes_made=0,
                error="late",
                error_class="throttled",
                refund=True,
            )
        ]
    )
    assert applied.lost_leases == [stale.job.id]
    assert await _entry(services, new.job.id) == before
    job = (await services.jobs.get(tenant_id, new.job.id))[0]
    assert (job.status, job.error) == (JobStatus.PROCESSING, None)


async def test_a_stale_dead_letter_changes_nothing(services: Services, clock: ManualClock) -> None:
    tenant_id, stale, new = await _reclaimed(services, clock)
    before = await _entry(services, new.job.id)
    applied = await services.queue.apply(
        [
            Failed(
                job_id=stale.job.id,
                claim_token=stale.claim_token,
                attempts=(),
                passes_made=1,
                error="late",
                error_class="message_permanent",
            )
        ]
    )
    assert applied.lost_leases == [stale.job.id]
    assert applied.dead_lettered == []
    assert await _entry(services, new.job.id) == before
    assert await _dead_letters(services) == 0
    assert (await services.jobs.get(tenant_id, new.job.id))[0].status is JobStatus.PROCESSING


async def test_the_new_claim_still_records_its_outcome(
    services: Services, clock: ManualClock
) -> None:
    tenant_id, _stale, new = await _reclaimed(services, clock)
    applied = await services.queue.apply(
        [
            Failed(
                job_id=new.job.id,
                claim_token=new.claim_token,
                attempts=(),
                passes_made=2,
                error="bad",
                error_class="message_permanent",
            )
        ]
    )
    assert applied.lost_leases == []
    assert await _dead_letters(services) == 1
    assert (await services.jobs.get(tenant_id, new.job.id))[0].status is JobStatus.FAILED


async def test_renewal_keeps_a_held_lease_from_running_out(
    services: Services, clock: ManualClock
) -> None:
    tenant, _ = await services.tenants.create("t", Plan.STARTUP)
    await services.jobs.accept(_new(tenant.id))
    claimed = (await claim(services.queue, Queue.EMAIL, 1, LEASE))[0]
    for _ in range(3):
        clock.advance(LEASE * 2 / 3)
        held = {claimed.job.id: claimed.claim_token}
        assert await services.queue.renew(held, LEASE) == {claimed.job.id}
        assert await claim(services.queue, Queue.EMAIL, 1, LEASE) == []
    clock.advance(LEASE + 1)
    again = await claim(services.queue, Queue.EMAIL, 1, LEASE)
    assert [c.job.id for c in again] == [claimed.job.id]


async def test_renewal_by_a_stale_claim_extends_nothing(
    services: Services, clock: ManualClock
) -> None:
    _tenant_id, stale, new = await _reclaimed(services, clock)
    before = await _entry(services, new.job.id)
    assert await services.queue.renew({stale.job.id: stale.claim_token}, LEASE * 10) == set()
    assert await _entry(services, new.job.id) == before
    assert await services.queue.renew({}, LEASE) == set()


async def test_one_renewal_covers_many_claims(services: Services, clock: ManualClock) -> None:
    tenant, _ = await services.tenants.create("t", Plan.STARTUP)
    for _ in range(4):
        await services.jobs.accept(_new(tenant.id))
    first = await claim(services.queue, Queue.EMAIL, 2, LEASE)
    second = await claim(services.queue, Queue.EMAIL, 2, LEASE)
    held = {c.job.id: c.claim_token for c in first + second}
    # A token of one claim does not renew a job of the other.
    crossed = {first[0].job.id: second[0].claim_token}
    assert await services.queue.renew(crossed, LEASE) == set()
    clock.advance(LEASE - 1)
    assert await services.queue.renew(held, LEASE) == set(held)
    clock.advance(LEASE - 1)
    assert await claim(services.queue, Queue.EMAIL, 4, LEASE) == []
