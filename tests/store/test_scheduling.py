"""Fair, ordered claims (docs/architecture.md, "The queue"), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections import Counter

from homing.channels import Channel
from homing.clock import ManualClock
from homing.domain.accepting import NewJob
from homing.domain.queue import Completed, Failed, Rescheduled
from homing.models import ClaimedJob, Priority, Queue
from homing.services import Services
from homing.store.queue import QueueStore
from tests.conftest import stored_tenant
from tests.store_helpers import claim

LEASE = 30.0


def _new(tenant_id: str, key: str | None = None, priority: Priority = Priority.NORMAL) -> NewJob:
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=priority,
        payload={"to": "a@example.com", "from": "b@example.com", "subject": "s", "text": "t"},
        ordering_key=key,
    )


async def _accept(services: Services, tenant_id: str, n: int, **kw: object) -> list[str]:
    return [(await services.jobs.accept(_new(tenant_id, **kw))).job.id for _ in range(n)]  # type: ignore[arg-type]


async def _claim(services: Services, n: int) -> list[ClaimedJob]:
    return await claim(services.queue, Queue.EMAIL, n, LEASE)


def _done(claimed: ClaimedJob) -> Completed:
    return Completed(
        job_id=claimed.job.id,
        claim_token=claimed.claim_token,
        attempts=(),
        provider="resend",
        provider_message_id=None,
        passes_made=1,
    )


async def test_a_flooding_tenant_gets_an_equal_share_not_the_batch(services: Services) -> None:
    flood = await stored_tenant(services, "flood")
    quiet = [await stored_tenant(services, f"quiet-{i}") for i in range(3)]
    await _accept(services, flood, 200)
    for tenant in quiet:
        await _accept(services, tenant, 2)
    counts = Counter(c.job.tenant_id for c in await _claim(services, 12))
    # Four tenants share a batch of 12: three each at most, all the quiet ones' jobs.
    assert counts == {flood: 3, quiet[0]: 2, quiet[1]: 2, quiet[2]: 2}


async def test_single_claims_rotate_between_tenants(services: Services) -> None:
    tenants = sorted([await stored_tenant(services, n) for n in ("a", "b", "c")])
    for tenant in tenants:
        await _accept(services, tenant, 5)
    served = [(await _claim(services, 1))[0].job.tenant_id for _ in range(9)]
    assert served == tenants * 3


async def test_priority_beats_fairness(services: Services) -> None:
    busy = await stored_tenant(services, "busy")
    other = await stored_tenant(services, "other")
    await _accept(services, busy, 10, priority=Priority.CRITICAL)
    await _accept(services, other, 10, priority=Priority.LOW)
    claimed = await _claim(services, 10)
    assert {c.job.tenant_id for c in claimed} == {busy}
    assert {c.job.priority for c in await _claim(services, 10)} == {Priority.LOW}


async def test_the_in_flight_cap_holds_back_a_tenant_until_it_finishes(
    services: Services, clock: ManualClock
) -> None:
    queue = QueueStore(services.db, clock, tenant_inflight=4)
    tenant = await stored_tenant(services)
    await _accept(services, tenant, 20)
    first = await claim(queue, Queue.EMAIL, 50, LEASE)
    assert len(first) == 4
    assert await claim(queue, Queue.EMAIL, 50, LEASE) == []
    await queue.apply([_done(first[0]), _done(first[1])])
    assert len(await claim(queue, Queue.EMAIL, 50, LEASE)) == 2
    clock.advance(LEASE + 1)  # expired leases no longer count as in flight
    assert len(await claim(queue, Queue.EMAIL, 50, LEASE)) == 4


async def test_jobs_without_a_key_run_in_parallel(services: Services) -> None:
    tenant = await stored_tenant(services)
    await _accept(services, tenant, 10)
    assert len(await _claim(services, 50)) == 10


async def test_one_key_delivers_in_acceptance_order_through_retries_and_failures(
    services: Services, clock: ManualClock
) -> None:
    tenant = await stored_tenant(services)
    ordered = await _accept(services, tenant, 4, key="order-1")
    loose = await _accept(services, tenant, 2)
    first = await _claim(services, 50)
    assert sorted(c.job.id for c in first) == sorted([ordered[0], *loose])
    head = next(c for c in first if c.job.id == ordered[0])
    retry = Rescheduled(
        job_id=head.job.id,
        claim_token=head.claim_token,
        attempts=(),
        available_at=clock.now() + 5,
        passes_made=1,
        error="x",
        error_class="transient",
    )
    await services.queue.apply([retry, *(_done(c) for c in first if c is not head)])
    clock.advance(6)
    again = await _claim(services, 50)
    assert [c.job.id for c in again] == [ordered[0]], "a retried head is not overtaken"
    await services.queue.apply(
        [
            Failed(
                job_id=ordered[0],
                claim_token=again[0].claim_token,
                attempts=(),
                passes_made=3,
                error="x",
                error_class="transient",
            )
        ]
    )
    for expected in ordered[1:]:
        [claimed] = await _claim(services, 50)
        assert claimed.job.id == expected
        await services.queue.apply([_done(claimed)])
    assert await _claim(services, 50) == []


async def test_keys_are_independent_and_per_tenant(services: Services) -> None:
    a = await stored_tenant(services, "a")
    b = await stored_tenant(services, "b")
    await _accept(services, a, 3, key="k1")
    await _accept(services, a, 3, key="k2")
    await _accept(services, b, 3, key="k1")
    claimed = await _claim(services, 50)
    assert len(claimed) == 3
    assert len({(c.job.tenant_id, c.job.id) for c in claimed}) == 3


async def test_a_retried_dead_letter_rejoins_its_key_at_the_back(services: Services) -> None:
    tenant = await stored_tenant(services)
    first, second = await _accept(services, tenant, 2, key="k")
    [head] = await _claim(services, 50)
    await services.queue.apply(
        [
            Failed(
                job_id=first,
                claim_token=head.claim_token,
                attempts=(),
                passes_made=3,
                error="x",
                error_class="transient",
            )
        ]
    )
    await services.jobs.retry(tenant, first)
    claimed = await _claim(services, 50)
    assert [c.job.id for c in claimed] == [second]
    await services.queue.apply([_done(claimed[0])])
    assert [c.job.id for c in await _claim(services, 50)] == [first]
