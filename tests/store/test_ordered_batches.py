"""Batches of ordered jobs on PostgreSQL (homing.store.accepting, homing.store.ordering).

Two batches of one tenant naming the same ordering keys in opposite orders, accepted at
the same moment by different processes, both go in, each key's jobs in line behind one
another: with a few keys (each locked, all before the first is placed, in one global
order) and with more than MOST_KEY_LOCKS (the tenant's lock alone). Taken in the batch's
order, the two waited on each other until PostgreSQL's deadlock detector failed one.
And a batch of a thousand ordered jobs holds one advisory lock, not a thousand:
PostgreSQL's lock table is shared by every tenant."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from homing.channels import Channel
from homing.clock import ManualClock
from homing.domain.accepting import Accepted, NewJob
from homing.models import Priority, Queue
from homing.services import Services, build
from homing.settings import Settings
from homing.store.accepting import Accept, accept_together
from homing.store.ordering import MOST_KEY_LOCKS
from homing.store.tables.core import queue_entries
from tests.conftest import advisory_locks_held, stored_tenant


def _new(tenant_id: str, key: str, n: int) -> NewJob:
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload={"to": "a@example.com", "from": "b@example.com", "subject": f"s{n}"},
        ordering_key=key,
    )


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
@pytest.mark.parametrize("count", [12, MOST_KEY_LOCKS + 4])
async def test_batches_naming_keys_in_opposite_orders_both_go_in(
    services: Services, settings: Settings, clock: ManualClock, count: int
) -> None:
    tenant_id = await stored_tenant(services)
    keys = [f"order-{n}" for n in range(count)]
    other = await build(settings, clock=clock, run_migrations=False)
    try:
        for _ in range(5):
            forward = [_new(tenant_id, key, n) for n, key in enumerate(keys)]
            backward = [_new(tenant_id, key, n) for n, key in enumerate(reversed(keys))]
            done = await asyncio.gather(
                services.batches.accept_many(forward), other.batches.accept_many(backward)
            )
            assert all(isinstance(a, Accepted) for batch in done for a in batch), done
    finally:
        await other.aclose()

    q = queue_entries.c
    async with services.db.transaction() as conn:
        rows = (await conn.execute(select(q.ordering_key, q.seq))).all()
    for key in keys:
        assert sorted(seq for k, seq in rows if k == key) == list(range(1, 11)), key


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_batch_of_a_thousand_ordered_jobs_holds_one_lock(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    news = [_new(tenant_id, f"line-{n}", n) for n in range(1000)]
    accepts = [Accept(new, ()) for new in news]
    async with services.db.transaction() as conn:
        outcomes = await accept_together(conn, accepts, clock.now(), True, whole=True)
        held = await advisory_locks_held(conn)

    assert all(isinstance(o, Accepted) for o in outcomes)
    assert held == 1
