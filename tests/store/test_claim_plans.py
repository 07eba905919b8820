"""The claim's query plans on PostgreSQL touch a handful of rows, not the backlog."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from homing.models import Plan, Queue
from homing.services import Services
from homing.store import picking
from tests.plans import plan_nodes, rows_read
from tests.store_helpers import claim

BACKLOG = 30_000

_SEED = [
    """
    INSERT INTO jobs (id, tenant_id, channel, queue, status, priority, payload, delivery,
                      attempts_made, skipped_providers, created_at, updated_at)
    SELECT gen_random_uuid()::text, :tenant, 'email', 'notifications-email', 'PENDING', 1,
           '{}', 'at_least_once', 0, '[]', now(), now()
    FROM generate_series(1, :n)
    """,
    """
    INSERT INTO queue_entries (job_id, tenant_id, queue, priority, available_at, attempts,
                               deferred_seconds, created_at)
    SELECT id, tenant_id, queue, priority, extract(epoch from now()) - 10, 0, 0,
           extract(epoch from now())
    FROM jobs WHERE tenant_id = :tenant
    """,
]


async def _explain(services: Services, statement: Any, params: dict[str, Any]) -> list[Any]:
    async with services.db.transaction() as conn:
        sql = f"EXPLAIN (ANALYZE, FORMAT JSON) {statement.text}"
        plan = (await conn.execute(text(sql), params)).scalar_one()
    return list(plan_nodes(plan[0]["Plan"]))


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_claim_queries_use_indexes_and_read_few_rows(services: Services) -> None:
    tenants = [(await services.tenants.create(f"t{i}", Plan.STARTUP))[0].id for i in range(3)]
    async with services.db.transaction() as conn:
        for index, tenant in enumerate(tenants):
            for statement in _SEED:
                await conn.execute(
                    text(statement), {"tenant": tenant, "n": BACKLOG if index == 0 else 50}
                )
        await conn.execute(text("ANALYZE queue_entries"))
        now = (await conn.execute(text("SELECT extract(epoch from now())"))).scalar_one()
    base = {"queue": Queue.EMAIL.value, "priority": 1, "now": float(now)}
    every_queue = {f"q{i}": queue.value for i, queue in enumerate(Queue)}
    plans = {
        "spans": await _explain(services, picking._spans_of(len(Queue)), every_queue),
        "tenants": await _explain(
            services,
            picking._TENANTS,
            {**base, "after": "", "upto": picking.LAST, "limit": 50, "steps": 306},
        ),
        "tenants, wrapped": await _explain(
            services,
            picking._TENANTS,
            {**base, "after": "", "upto": tenants[1], "limit": 50, "steps": 306},
        ),
        "take": await _explain(
            services,
            picking._PG_TAKE,
            {**base, "tenants": tenants, "share": 17, "cap": 100, "budget": 50},
        ),
    }
    for name, nodes in plans.items():
        kinds = {n["Node Type"] for n in nodes if n.get("Relation Name") == "queue_entries"}
        assert "Seq Scan" not in kinds, (name, kinds)
        assert rows_read(nodes, "queue_entries") < 500, (name, rows_read(nodes, "queue_entries"))
    claimed = await claim(services.queue, Queue.EMAIL, 50, 30)
    assert len(claimed) == 50
    assert {c.job.tenant_id for c in claimed} == set(tenants)


_SCHEDULE = """
    UPDATE queue_entries SET available_at = extract(epoch from now()) + 86400
    WHERE tenant_id = :tenant
"""


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_scheduled_backlog_costs_the_claim_a_seek_and_takes_no_place(
    services: Services,
) -> None:
    # docs/scheduling.md: 30,000 entries due tomorrow, then one tenant with work now.
    tenants = [(await services.tenants.create(f"t{i}", Plan.STARTUP))[0].id for i in range(2)]
    tenants.sort()  # the scheduled one first: the walk meets it before the due one
    async with services.db.transaction() as conn:
        for index, tenant in enumerate(tenants):
            for statement in _SEED:
                await conn.execute(
                    text(statement), {"tenant": tenant, "n": 50 if index else BACKLOG}
                )
        await conn.execute(text(_SCHEDULE), {"tenant": tenants[0]})
        await conn.execute(text("ANALYZE queue_entries"))
        now = (await conn.execute(text("SELECT extract(epoch from now())"))).scalar_one()
    base = {"queue": Queue.EMAIL.value, "priority": 1, "now": float(now)}
    walk = {**base, "after": "", "upto": picking.LAST, "limit": 1, "steps": 257}
    nodes = await _explain(services, picking._TENANTS, walk)
    kinds = {n["Node Type"] for n in nodes if n.get("Relation Name") == "queue_entries"}
    assert "Seq Scan" not in kinds, kinds
    assert rows_read(nodes, "queue_entries") < 50, rows_read(nodes, "queue_entries")
    take = {**base, "tenants": tenants, "share": 25, "cap": 100, "budget": 50}
    assert rows_read(await _explain(services, picking._PG_TAKE, take), "queue_entries") < 200
    # A claim of one takes the due tenant's entry: the waiting ones are passed over.
    [claimed] = await claim(services.queue, Queue.EMAIL, 1, 30)
    assert claimed.job.tenant_id == tenants[1]
