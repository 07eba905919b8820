"""The claim's query plans on PostgreSQL touch a handful of rows, not the backlog."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text

from homing.models import Plan, Queue
from homing.services import Services
from homing.store import picking

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


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


async def _explain(services: Services, statement: Any, params: dict[str, Any]) -> list[Any]:
    async with services.db.transaction() as conn:
        sql = f"EXPLAIN (ANALYZE, FORMAT JSON) {statement.text}"
        plan = (await conn.execute(text(sql), params)).scalar_one()
    return list(_nodes(plan[0]["Plan"]))


def _rows_read(nodes: list[dict[str, Any]]) -> int:
    """Rows produced or filtered away by every scan of queue_entries."""
    total = 0
    for node in nodes:
        if node.get("Relation Name") == "queue_entries":
            loops = node.get("Actual Loops", 1)
            total += (node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)) * loops
    return total


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
    plans = {
        "tenants": await _explain(
            services, picking._TENANTS, {**base, "after": "", "upto": picking.LAST, "limit": 50}
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
        assert _rows_read(nodes) < 500, (name, _rows_read(nodes))
    claimed = await services.queue.claim(Queue.EMAIL, 50, 30)
    assert len(claimed) == 50
    assert {c.job.tenant_id for c in claimed} == set(tenants)
