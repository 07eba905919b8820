"""Group commit of single accepts (homing.store.accepting), on SQLite and PostgreSQL.

Accepts started together share transactions; each must still get exactly the answer it
would have had alone: its own job, replay, conflict or refusal.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

import homing.store.suppressions as suppressions_module
from homing.channels import Channel
from homing.domain.accepting import Accepted, NewJob
from homing.errors import IdempotencyConflict, QuotaExceeded, UnstorableValue
from homing.managers.plans import Quota, month_of
from homing.managers.sending_domains import DomainNotVerified
from homing.models import JobStatus, Priority, Queue
from homing.services import Services
from homing.store.accepting import AcceptCheck
from homing.store.tables.core import jobs, queue_entries
from homing.store.usage import UsageStore
from tests.conftest import stored_tenant

EMAIL_QUOTA = (Quota("email", frozenset({Channel.EMAIL}), 10),)


def _new(tenant_id: str, n: int = 0, *, key: str | None = None, body: str = "h") -> NewJob:
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload={"to": f"user{n}@example.com", "from": "b@example.com", "subject": "s"},
        idempotency_key=key,
        request_hash=body if key else None,
    )


@contextmanager
def _counting_transactions(services: Services) -> Iterator[list[int]]:
    """Count the transactions ``services.db`` opens meanwhile."""
    opened = [0]
    original = services.db.transaction

    @asynccontextmanager
    async def counted() -> AsyncIterator[AsyncConnection]:
        opened[0] += 1
        async with original() as conn:
            yield conn

    services.db.transaction = counted  # type: ignore[method-assign]
    try:
        yield opened
    finally:
        services.db.transaction = original  # type: ignore[method-assign]


async def _count(services: Services, table: Any, tenant_id: str) -> int:
    async with services.db.transaction() as conn:
        query = select(func.count()).select_from(table).where(table.c.tenant_id == tenant_id)
        return int((await conn.execute(query)).scalar_one())


async def _settle(*accepts: Any) -> list[Accepted | BaseException]:
    return list(await asyncio.gather(*accepts, return_exceptions=True))


async def test_accepts_started_together_share_transactions_and_each_is_stored(
    services: Services,
) -> None:
    a, b = await stored_tenant(services), await stored_tenant(services)
    with _counting_transactions(services) as opened:
        results = await _settle(
            *(services.jobs.accept(_new(tenant, n)) for n in range(30) for tenant in (a, b))
        )
    assert all(isinstance(r, Accepted) and not r.replayed for r in results)
    assert len({r.job.id for r in results if isinstance(r, Accepted)}) == 60
    assert opened[0] < 60 / 4, f"{opened[0]} transactions for 60 accepts"
    for tenant in (a, b):
        assert await _count(services, jobs, tenant) == 30
        assert await _count(services, queue_entries, tenant) == 30
    used = await UsageStore(services.db).used(a, month_of(services.clock.now()))
    assert used[Channel.EMAIL] == 30


async def test_one_idempotency_key_sent_many_times_at_once_is_one_job(
    services: Services,
) -> None:
    tenant = await stored_tenant(services)
    results = await _settle(*(services.jobs.accept(_new(tenant, key="k")) for _ in range(10)))
    accepted = [r for r in results if isinstance(r, Accepted)]
    assert len(accepted) == 10
    assert len({r.job.id for r in accepted}) == 1
    assert sum(not r.replayed for r in accepted) == 1
    assert await _count(services, jobs, tenant) == 1
    used = await UsageStore(services.db).used(tenant, month_of(services.clock.now()))
    assert used[Channel.EMAIL] == 1


async def test_a_reused_key_with_another_body_in_the_same_burst_is_a_conflict(
    services: Services,
) -> None:
    tenant = await stored_tenant(services)
    first, second, third = await _settle(
        services.jobs.accept(_new(tenant, key="k", body="one")),
        services.jobs.accept(_new(tenant, key="k", body="two")),
        services.jobs.accept(_new(tenant, 3)),
    )
    assert isinstance(first, Accepted) and not first.replayed
    assert isinstance(second, IdempotencyConflict)
    assert isinstance(third, Accepted)


async def test_a_quota_refuses_exactly_those_over_it_and_no_other_tenants(
    services: Services,
) -> None:
    limited, other = await stored_tenant(services), await stored_tenant(services)
    results = await _settle(
        *(services.jobs.accept(_new(limited, n), EMAIL_QUOTA) for n in range(25)),
        *(services.jobs.accept(_new(other, n)) for n in range(25)),
    )
    mine, theirs = results[:25], results[25:]
    assert sum(isinstance(r, Accepted) for r in mine) == 10
    assert sum(isinstance(r, QuotaExceeded) for r in mine) == 15
    assert all(isinstance(r, Accepted) for r in theirs)
    assert await _count(services, jobs, limited) == 10
    assert await _count(services, queue_entries, limited) == 10
    used = await UsageStore(services.db).used(limited, month_of(services.clock.now()))
    assert used[Channel.EMAIL] == 10


async def test_a_suppressed_recipient_in_a_group_is_stored_suppressed_without_quota(
    services: Services,
) -> None:
    tenant = await stored_tenant(services)
    await services.suppressions.add(tenant, Channel.EMAIL, "User3@Example.com", "bounce", "manual")
    results = await _settle(*(services.jobs.accept(_new(tenant, n)) for n in range(6)))
    statuses = [r.job.status for r in results if isinstance(r, Accepted)]
    assert statuses == [JobStatus.PENDING] * 3 + [JobStatus.SUPPRESSED] + [JobStatus.PENDING] * 2
    assert await _count(services, queue_entries, tenant) == 5
    used = await UsageStore(services.db).used(tenant, month_of(services.clock.now()))
    assert used[Channel.EMAIL] == 5


async def test_a_check_loads_once_per_scope_and_refuses_only_its_own_job(
    services: Services,
) -> None:
    tenant = await stored_tenant(services)
    loads: list[str] = []

    def rule(sender_ok: bool) -> AcceptCheck:
        async def load(conn: AsyncConnection) -> str:
            loads.append("loaded")
            return "registered domains"

        def apply(loaded: str) -> None:
            assert loaded == "registered domains"
            if not sender_ok:
                raise DomainNotVerified("not verified", {"domain": "x.example"})

        return AcceptCheck(scope=("domains", tenant), load=load, apply=apply)

    results = await _settle(
        *(services.jobs.accept(_new(tenant, n), (), rule(n != 2)) for n in range(8))
    )
    assert [type(r) for r in results] == [Accepted] * 2 + [DomainNotVerified] + [Accepted] * 5
    assert len(loads) < 8
    assert await _count(services, jobs, tenant) == 7


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_value_the_database_refuses_fails_only_its_own_accept(
    services: Services,
) -> None:
    tenant = await stored_tenant(services)
    # PostgreSQL text cannot hold NUL: SQLSTATE 22021, a data exception.
    results = await _settle(
        *(services.jobs.accept(_new(tenant, n, key=f"k{n}")) for n in range(5)),
        services.jobs.accept(_new(tenant, 99, key="bad\x00key")),
        *(services.jobs.accept(_new(tenant, n, key=f"k{n}")) for n in range(5, 10)),
    )
    assert isinstance(results[5], UnstorableValue)
    assert all(isinstance(r, Accepted) for i, r in enumerate(results) if i != 5)
    assert await _count(services, jobs, tenant) == 10


async def test_a_caller_that_goes_away_leaves_the_others_answered(services: Services) -> None:
    tenant = await stored_tenant(services)
    gone = asyncio.create_task(services.jobs.accept(_new(tenant, 0)))
    others = [asyncio.create_task(services.jobs.accept(_new(tenant, n))) for n in range(1, 6)]
    gone.cancel()
    results = await _settle(*others)
    assert all(isinstance(r, Accepted) for r in results)
    assert await _count(services, jobs, tenant) in (5, 6)


async def test_a_batch_reads_each_recipient_once(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The row made for a job carries its recipient: the suppression check uses it
    rather than parsing every address again (a 1,000-message batch paid for both)."""
    parsed: list[str] = []
    original = suppressions_module.address_key

    def address_key(value: str) -> str:
        parsed.append(value)
        return original(value)

    monkeypatch.setattr(suppressions_module, "address_key", address_key)
    tenant_id = await stored_tenant(services)
    await services.batches.accept_many([_new(tenant_id, n) for n in range(5)])
    assert sorted(parsed) == [f"user{n}@example.com" for n in range(5)]
