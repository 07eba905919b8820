"""The console's notification reads on PostgreSQL: with 100,000 notifications (and a
step each), 99 % of them a big tenant's, a small tenant's page of every status or of a
rare one, and the step a job is, each read their index (migration 0038) and a bounded
number of rows, never the table (walking the primary key would skip the big tenant's)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Select, text

from homing.domain.notification_search import NotificationFilter
from homing.models import Plan
from homing.services import Services
from homing.store.notification_search import page_query, step_of_job_query
from tests.plans import plan_nodes, rows_read

NOTES = 100_000
# A page is 51 rows; a rare status among a tenant's may not fill one, but its index
# holds only that status's rows.
READ_BOUND = 51 + 10

# Ids rise with n (ids are time-ordered); one notification in 100 is the small
# tenant's, one in 5,000 failed; each has one email step whose job id is made from n.
_SEED = """
INSERT INTO notifications (id, tenant_id, strategy, status, recipient, template,
                           created_at, updated_at)
SELECT '0194d1c0-0000-7000-8000-' || lpad(n::text, 12, '0'),
       CASE WHEN n % 100 = 0 THEN :small ELSE :big END, 'all',
       CASE WHEN n % 5000 = 0 THEN 'failed' ELSE 'succeeded' END,
       'user-' || (n % 5000), 'report', now(), now()
FROM generate_series(1, CAST(:notes AS int)) AS n;
INSERT INTO notification_steps (notification_id, position, tenant_id, channel, status,
                                job_id, created_at, updated_at)
SELECT '0194d1c0-0000-7000-8000-' || lpad(n::text, 12, '0'), 0,
       CASE WHEN n % 100 = 0 THEN :small ELSE :big END, 'email', 'accepted',
       '0194d1c0-0000-7000-9000-' || lpad(n::text, 12, '0'), now(), now()
FROM generate_series(1, CAST(:notes AS int)) AS n
"""


async def _plan(services: Services, query: Select[Any]) -> list[dict[str, Any]]:
    async with services.db.transaction() as conn:
        sql = str(query.compile(conn.sync_connection, compile_kwargs={"literal_binds": True}))
        plan = (await conn.execute(text(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}"))).scalar_one()
    return list(plan_nodes(plan[0]["Plan"]))


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_each_read_uses_its_index_and_few_rows(services: Services) -> None:
    big, tenant = [(await services.tenants.create(n, Plan.STARTUP))[0].id for n in "bs"]
    async with services.db.transaction() as conn:
        for statement in _SEED.split(";"):
            await conn.execute(text(statement), {"big": big, "small": tenant, "notes": NOTES})
        await conn.execute(text("ANALYZE notifications"))
        await conn.execute(text("ANALYZE notification_steps"))
    middle = "0194d1c0-0000-7000-8000-" + str(NOTES // 2).zfill(12)
    reads = {
        "every status": (page_query(NotificationFilter(tenant), 50, None), "notifications"),
        "from a cursor": (page_query(NotificationFilter(tenant), 50, middle), "notifications"),
        "failed": (page_query(NotificationFilter(tenant, "failed"), 50, None), "notifications"),
        "a job's step": (
            step_of_job_query(tenant, "0194d1c0-0000-7000-9000-" + str(NOTES - 100).zfill(12)),
            "notification_steps",
        ),
    }
    expected = {
        "every status": "ix_notifications_tenant",
        "from a cursor": "ix_notifications_tenant",
        "failed": "ix_notifications_tenant_status",
        "a job's step": "ix_notification_steps_job",
    }
    for name, (query, table) in reads.items():
        nodes = await _plan(services, query)
        indexes = {n.get("Index Name") for n in nodes}
        assert expected[name] in indexes, (name, nodes)
        assert not any(n.get("Node Type") == "Seq Scan" for n in nodes), (name, nodes)
        assert rows_read(nodes, table) <= READ_BOUND, (name, rows_read(nodes, table))
