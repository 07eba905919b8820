"""The queue's store contract, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.channels import Channel
from homing.clock import ManualClock
from homing.domain.accepting import NewJob
from homing.domain.queue import Completed, Failed, Rescheduled
from homing.errors import Conflict, IdempotencyConflict, NotFound
from homing.models import JobStatus, Priority, Queue
from homing.services import Services
from homing.store.accepting import entry_row, job_row
from tests.conftest import stored_tenant
from tests.store_helpers import claim, claim_first, pending_count


def _new(tenant_id: str, priority: Priority = Priority.NORMAL, key: str | None = None) -> NewJob:
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=priority,
        payload={"to": "a@example.com", "from": "b@example.com", "subject": "s", "text": "t"},
        idempotency_key=key,
        request_hash="h1" if key else None,
    )


async def test_accept_stores_job_and_queue_entry_together(services: Services) -> None:
    tenant_id = await stored_tenant(services)
    accepted = await services.jobs.accept(_new(tenant_id))
    assert accepted.job.status is JobStatus.PENDING
    assert await pending_count(services.db, Queue.EMAIL) == 1


async def test_claim_takes_higher_priority_first_and_leases(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    low = (await services.jobs.accept(_new(tenant_id, Priority.LOW))).job
    critical = (await services.jobs.accept(_new(tenant_id, Priority.CRITICAL))).job
    claimed = await claim(services.queue, Queue.EMAIL, 1, lease_seconds=30)
    assert [c.job.id for c in claimed] == [critical.id]
    assert claimed[0].pass_number == 1
    assert claimed[0].job.status is JobStatus.PROCESSING
    rest = await claim(services.queue, Queue.EMAIL, 10, lease_seconds=30)
    assert [c.job.id for c in rest] == [low.id]
    assert await claim(services.queue, Queue.EMAIL, 10, lease_seconds=30) == []
    clock.advance(31)
    again = await claim(services.queue, Queue.EMAIL, 10, lease_seconds=30)
    assert {c.job.id for c in again} == {low.id, critical.id}
    assert {c.pass_number for c in again} == {2}


async def test_concurrent_claims_never_hand_out_one_entry_twice(services: Services) -> None:
    tenant_id = await stored_tenant(services)
    for _ in range(40):
        await services.jobs.accept(_new(tenant_id))
    batches = await asyncio.gather(
        *(claim(services.queue, Queue.EMAIL, 7, lease_seconds=30) for _ in range(8))
    )
    ids = [c.job.id for batch in batches for c in batch]
    assert len(ids) == len(set(ids)) == 40


async def test_outcomes_complete_reschedule_and_dead_letter(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    jobs = [(await services.jobs.accept(_new(tenant_id))).job for _ in range(3)]
    claimed = {c.job.id: c for c in await claim(services.queue, Queue.EMAIL, 3, 30)}
    done, later, dead = (claimed[j.id] for j in jobs)
    applied = await services.queue.apply(
        [
            Completed(
                job_id=done.job.id,
                claim_token=done.claim_token,
                attempts=(),
                provider="resend",
                provider_message_id="m-1",
                passes_made=1,
            ),
            Rescheduled(
                job_id=later.job.id,
                claim_token=later.claim_token,
                attempts=(),
                available_at=clock.now() + 100,
                passes_made=1,
                error="boom",
                error_class="x",
            ),
            Failed(
                job_id=dead.job.id,
                claim_token=dead.claim_token,
                attempts=(),
                passes_made=1,
                error="bad address",
                error_class="message_permanent",
            ),
        ]
    )
    assert applied.dead_lettered == [(dead.job.id, "message_permanent", "bad address")]
    statuses = {j.id: (await services.jobs.get(tenant_id, j.id))[0].status for j in jobs}
    assert statuses == {
        done.job.id: JobStatus.COMPLETED,
        later.job.id: JobStatus.PENDING,
        dead.job.id: JobStatus.FAILED,
    }
    assert await pending_count(services.db) == 1
    clock.advance(101)
    assert [c.job.id for c in await claim(services.queue, Queue.EMAIL, 5, 30)] == [later.job.id]


async def test_a_stale_lease_cannot_overwrite_the_new_holder(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    job = (await services.jobs.accept(_new(tenant_id))).job
    first = (await claim(services.queue, Queue.EMAIL, 1, 30))[0]
    clock.advance(31)
    await claim(services.queue, Queue.EMAIL, 1, 30)
    applied = await services.queue.apply(
        [
            Failed(
                job_id=job.id,
                claim_token=first.claim_token,
                attempts=(),
                passes_made=1,
                error="late",
                error_class="transient",
            )
        ]
    )
    assert applied.lost_leases == [job.id]
    assert (await services.jobs.get(tenant_id, job.id))[0].status is JobStatus.PROCESSING


async def test_idempotency_key_replays_or_conflicts(services: Services) -> None:
    tenant_id = await stored_tenant(services)
    first = await services.jobs.accept(_new(tenant_id, key="k1"))
    again = await services.jobs.accept(_new(tenant_id, key="k1"))
    assert again.replayed and again.job.id == first.job.id
    changed = dataclasses.replace(_new(tenant_id, key="k1"), request_hash="h2")
    with pytest.raises(IdempotencyConflict):
        await services.jobs.accept(changed)
    assert await pending_count(services.db) == 1


async def test_concurrent_identical_requests_make_one_job(services: Services) -> None:
    tenant_id = await stored_tenant(services)
    results = await asyncio.gather(
        *(services.jobs.accept(_new(tenant_id, key="same")) for _ in range(10))
    )
    assert len({r.job.id for r in results}) == 1
    assert sum(not r.replayed for r in results) == 1


async def test_retry_is_conditional_on_failed(services: Services) -> None:
    tenant_id = await stored_tenant(services)
    job = (await services.jobs.accept(_new(tenant_id))).job
    with pytest.raises(Conflict):
        await services.jobs.retry(tenant_id, job.id)
    claimed = (await claim(services.queue, Queue.EMAIL, 1, 30))[0]
    await services.queue.apply(
        [
            Failed(
                job_id=job.id,
                claim_token=claimed.claim_token,
                attempts=(),
                passes_made=3,
                error="x",
                error_class="transient",
            )
        ]
    )
    results = await asyncio.gather(
        *(services.jobs.retry(tenant_id, job.id) for _ in range(5)), return_exceptions=True
    )
    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(isinstance(r, Conflict) for r in results if isinstance(r, Exception))
    assert await pending_count(services.db) == 1
    with pytest.raises(NotFound):
        await services.jobs.retry("someone-else", job.id)


async def test_a_claim_over_several_queues_is_one_transaction(services: Services) -> None:
    """The worker's claim round tries its queues in turn; the empty ones it passes cost
    a query each in the claim's transaction, not a transaction of their own."""
    tenant_id = await stored_tenant(services)
    job = (await services.jobs.accept(_new(tenant_id))).job
    opened = 0
    original = services.db.transaction

    @contextlib.asynccontextmanager
    async def counted() -> AsyncIterator[AsyncConnection]:
        nonlocal opened
        opened += 1
        async with original() as conn:
            yield conn

    services.db.transaction = counted  # type: ignore[method-assign]
    try:
        empty = (Queue.PLATFORM_EMAIL, Queue.SMS, Queue.CHAT, Queue.WEBHOOK)
        assert await claim_first(services.queue, empty, 10, lease_seconds=30) == []
        claimed = await claim_first(services.queue, (*empty, Queue.EMAIL), 10, lease_seconds=30)
    finally:
        services.db.transaction = original  # type: ignore[method-assign]
    assert [c.job.id for c in claimed] == [job.id]
    assert opened == 2


def test_a_send_at_due_now_is_not_held_by_its_rounding_to_the_microsecond() -> None:
    # A past send_at is now; stored to the microsecond it can round a fraction of one past
    # the claim's ``now``, and such a job sat out every claim at that instant (seen in CI).
    epoch = 1_700_000_000.0000007
    row = job_row(dataclasses.replace(_new("t"), send_at=epoch - 86_400), epoch)
    assert row["send_at"].timestamp() > epoch  # the rounding this guards against
    assert entry_row(row, epoch)["available_at"] == epoch
    later = job_row(dataclasses.replace(_new("t"), send_at=epoch + 60), epoch)
    assert entry_row(later, epoch)["available_at"] == pytest.approx(epoch + 60)
