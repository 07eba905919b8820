"""Job search plans on PostgreSQL: with 200,000 jobs across tenants, each filter's page
reads its index backwards and touches a bounded number of rows, never the table."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import text

from homing.channels import Channel
from homing.clock import as_datetime
from homing.domain.job_search import JobFilter
from homing.models import JobStatus, Plan
from homing.services import Services
from homing.store.job_search import search_query
from tests.plans import plan_nodes, rows_read

JOBS = 200_000
TENANTS = 20
# A page is 51 rows. A filter with an index of its own reads about that many; the planner
# may serve a time range alone by walking the primary key newest first and skipping the
# other tenants' jobs, 51 * TENANTS rows: still a page's worth, not the table.
READ_BOUND = 51 * TENANTS + 100

# Ids rise with n as created_at does (ids are time-ordered); one in three jobs is
# FAILED, the channels take turns, recipients repeat every 5,000 jobs, one job in ten
# has an idempotency key.
_SEED = """
INSERT INTO jobs (id, tenant_id, channel, queue, status, priority, payload, delivery,
                  idempotency_key, attempts_made, skipped_providers, created_at,
                  updated_at, recipient)
SELECT '0194d1c0-0000-7000-8000-' || lpad(n::text, 12, '0'),
       (CAST(:tenants AS text[]))[1 + n % :count],
       (ARRAY['email', 'sms', 'chat', 'webhook'])[1 + n / 7 % 4], 'notifications-email',
       CASE WHEN n % 3 = 0 THEN 'FAILED' ELSE 'COMPLETED' END, 1, '{}', 'at_least_once',
       CASE WHEN n % 10 = 0 THEN 'key-' || n END, 0, '[]',
       now() - (CAST(:jobs AS int) - n) * interval '1 second', now(),
       'user' || (n % 5000) || '@example.com'
FROM generate_series(1, CAST(:jobs AS int)) AS n
"""


async def _plan(services: Services, found: JobFilter) -> list[dict[str, Any]]:
    query = search_query(found, 50, None)
    async with services.db.transaction() as conn:
        sql = str(query.compile(conn.sync_connection, compile_kwargs={"literal_binds": True}))
        plan = (await conn.execute(text(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}"))).scalar_one()
    return list(plan_nodes(plan[0]["Plan"]))


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_every_filter_reads_its_index_and_few_rows(services: Services) -> None:
    tenants = [(await services.tenants.create(f"t{i}", Plan.STARTUP))[0].id for i in range(TENANTS)]
    async with services.db.transaction() as conn:
        await conn.execute(text(_SEED), {"tenants": tenants, "count": TENANTS, "jobs": JOBS})
        await conn.execute(text("ANALYZE jobs"))
    tenant = tenants[1]
    recent = as_datetime(services.clock.now()) - timedelta(hours=1)
    filters = {
        "to": JobFilter(tenant_id=tenant, address="user1@example.com"),
        "channel": JobFilter(tenant_id=tenant, channel=Channel.EMAIL),
        "status": JobFilter(tenant_id=tenant, status=JobStatus.FAILED),
        "idempotency_key": JobFilter(tenant_id=tenant, idempotency_key="key-1000"),
        "since": JobFilter(tenant_id=tenant, since=recent),
        "to and since": JobFilter(tenant_id=tenant, address="user1@example.com", since=recent),
        "admin to": JobFilter(address="user1@example.com"),
        "admin status": JobFilter(status=JobStatus.FAILED),
        "admin all": JobFilter(),
    }
    for name, found in filters.items():
        nodes = await _plan(services, found)
        kinds = {n["Node Type"] for n in nodes if n.get("Relation Name") == "jobs"}
        assert kinds, (name, nodes)
        # A rare recipient across tenants may be a bitmap scan of its index: still few rows.
        assert "Seq Scan" not in kinds, (name, kinds)
        assert rows_read(nodes, "jobs") <= READ_BOUND, (name, rows_read(nodes, "jobs"))
