"""A batch (homing.store.batches) is a group of accepts that commits together: the same
routine as the group commit, its rule inside the transaction, refused whole on quota."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.channels import Channel
from homing.domain.accepting import Accepted, NewJob
from homing.errors import IdempotencyConflict, QuotaExceeded
from homing.managers.plans import Quota
from homing.managers.sending_domains import DomainNotVerified
from homing.models import Plan, Priority, Queue
from homing.services import Services
from homing.store.accepting import AcceptCheck
from homing.store.tables.core import jobs

QUOTA = (Quota("email", frozenset({Channel.EMAIL}), 3),)


def _new(tenant_id: str, n: int, *, key: str | None = None, body: str = "h") -> NewJob:
    payload = {"to": f"user{n}@example.com", "from": "b@example.com", "subject": "s"}
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload=payload,
        idempotency_key=key,
        request_hash=body if key else None,
    )


async def _tenant(services: Services) -> str:
    tenant, _ = await services.tenants.create("t", Plan.STARTUP)
    return tenant.id


async def _jobs(services: Services, tenant_id: str) -> int:
    async with services.db.transaction() as conn:
        query = select(func.count()).select_from(jobs).where(jobs.c.tenant_id == tenant_id)
        return int((await conn.execute(query)).scalar_one())


@contextmanager
def _counting_transactions(services: Services) -> Iterator[list[int]]:
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


async def test_a_batch_runs_its_rule_in_its_own_transaction_once_for_all(
    services: Services,
) -> None:
    tenant = await _tenant(services)
    loads: list[AsyncConnection] = []

    def rule(ok: bool) -> AcceptCheck:
        async def load(conn: AsyncConnection) -> bool:
            loads.append(conn)
            return True

        def apply(_: bool) -> None:
            if not ok:
                raise DomainNotVerified("not verified", {"domain": "x.example"})

        return AcceptCheck(scope=("domains", tenant), load=load, apply=apply)

    news = [_new(tenant, n) for n in range(5)]
    with _counting_transactions(services) as opened:
        results = await services.batches.accept_many(news, (), [rule(n != 1) for n in range(5)])
    assert [type(r) for r in results] == [Accepted, DomainNotVerified, *[Accepted] * 3]
    assert len(loads) == 1 and opened[0] == 1
    assert await _jobs(services, tenant) == 4


async def test_a_key_repeated_in_a_batch_replays_its_first_use_or_conflicts(
    services: Services,
) -> None:
    tenant = await _tenant(services)
    first, again, other = await services.batches.accept_many(
        [_new(tenant, 0, key="k"), _new(tenant, 0, key="k"), _new(tenant, 0, key="k", body="x")]
    )
    assert isinstance(first, Accepted) and not first.replayed
    assert isinstance(again, Accepted) and again.replayed and again.job.id == first.job.id
    assert isinstance(other, IdempotencyConflict)
    assert await _jobs(services, tenant) == 1


async def test_a_batch_over_a_quota_is_refused_whole(services: Services) -> None:
    tenant = await _tenant(services)
    with pytest.raises(QuotaExceeded):
        await services.batches.accept_many([_new(tenant, n) for n in range(4)], QUOTA)
    assert await _jobs(services, tenant) == 0
    fits = await services.batches.accept_many([_new(tenant, n) for n in range(3)], QUOTA)
    assert all(isinstance(r, Accepted) for r in fits)
