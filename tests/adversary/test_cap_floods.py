"""A hostile tenant against frequency caps (homing.store.preferences).

- Another tenant's sends to the same address, or to a recipient of the same external
  id, use none of a tenant's cap: every count names the tenant (or its recipient's row
  id, which is the tenant's own).
- A flood does not lengthen the count a capped send makes. With 100,000 jobs to one
  address and recipient (most of them capped, so SUPPRESSED, the rest in another
  category, in none, or older than the window), each count reads its partial index and
  at most the cap's rows, in PostgreSQL's generic plan too (the one a statement
  prepared by the driver ends up with), where a bound parameter could not prove a
  partial index usable.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Select, text
from sqlalchemy.dialects import postgresql

from homing.channels import Channel
from homing.clock import ManualClock, as_datetime
from homing.domain.accepting import NewJob
from homing.domain.preferences import PreferenceCheck
from homing.models import JobStatus, Plan, Priority, Queue
from homing.services import Services
from homing.store.preferences import address_jobs_query, recipient_jobs_query, unwanted_rows
from tests.conftest import advisory_locks_held
from tests.plans import plan_nodes, rows_read

CAP = {"count": 5, "per_seconds": 86_400}
FLOOD = 100_000
ADDRESS = "target@example.com"


async def _capped_category(services: Services, tenant_id: str) -> None:
    values = {"name": "Digest", "kind": "transactional", "frequency_cap": CAP}
    await services.recipients.put_category(tenant_id, "digest", values)


def _send(tenant_id: str, check: PreferenceCheck, n: int) -> NewJob:
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload={"to": ADDRESS, "from": "b@example.com", "subject": f"s{n}"},
        preference=check,
    )


async def test_another_tenants_sends_to_the_same_person_use_none_of_the_cap(
    services: Services,
) -> None:
    mine, theirs = [(await services.tenants.create(n, Plan.STARTUP))[0].id for n in "mt"]
    checks = {}
    for tenant_id in (mine, theirs):
        await _capped_category(services, tenant_id)
        recipient, _ = await services.recipients.put(tenant_id, "same-id", {"email": ADDRESS})
        checks[tenant_id] = PreferenceCheck(recipient.id, "digest")
    alone = PreferenceCheck(None, "digest", address_ref="0" * 64)

    for n in range(2 * CAP["count"]):  # theirs, both ways, far past the cap
        await services.jobs.accept(_send(theirs, checks[theirs] if n % 2 else alone, n))
    kept = [
        await services.jobs.accept(_send(mine, checks[mine] if n % 2 else alone, n))
        for n in range(CAP["count"])
    ]

    assert [a.job.status for a in kept] == [JobStatus.PENDING] * CAP["count"]


# One tenant's jobs to ADDRESS, ids rising with n; recipient_id on the even ones.
# n % 10: 0-5 in "digest" (past n = 10 capped sends, so SUPPRESSED: the first six were
# sent), 6 in "digest" but two days old, 7 in "other", 8-9 in no category.
_SEED = """
INSERT INTO jobs (id, tenant_id, channel, queue, status, priority, payload, delivery,
                  attempts_made, skipped_providers, error_class, created_at, updated_at,
                  test, recipient, recipient_id, category)
SELECT '0194d1c0-0000-7000-8000-' || lpad(n::text, 12, '0'), :tenant, 'email', 'email',
       CASE WHEN n % 10 < 6 AND n > 10 THEN 'SUPPRESSED' ELSE 'COMPLETED' END, 1, '{}',
       'direct', 0, '[]', CASE WHEN n % 10 < 6 AND n > 10 THEN 'frequency_cap' END,
       CASE WHEN n % 10 = 6 THEN CAST(:old AS timestamptz) ELSE CAST(:now AS timestamptz) END,
       CAST(:now AS timestamptz), false, :address,
       CASE WHEN n % 2 = 0 THEN :recipient END,
       CASE WHEN n % 10 <= 6 THEN 'digest' WHEN n % 10 = 7 THEN 'other' END
FROM generate_series(1, CAST(:flood AS int)) AS n
"""


def _literal(value: object) -> str:
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime):
        value = value.isoformat()
    return "'" + str(value).replace("'", "''") + "'"


async def _generic_plan(services: Services, query: Select[Any]) -> list[dict[str, Any]]:
    """The plan PostgreSQL runs ``query`` with once it is prepared and its plan generic."""
    compiled = query.compile(dialect=postgresql.dialect(paramstyle="numeric_dollar"))  # type: ignore[no-untyped-call]
    values = ", ".join(_literal(compiled.params[name]) for name in compiled.positiontup or ())
    async with services.db.transaction() as conn:
        await conn.execute(text("SET LOCAL plan_cache_mode = force_generic_plan"))
        await conn.execute(text(f"PREPARE capped AS {compiled.string}"))
        explain = f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE capped({values})"
        plan = (await conn.execute(text(explain))).scalar_one()
        await conn.execute(text("DEALLOCATE capped"))
    return list(plan_nodes(plan[0]["Plan"]))


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_flood_of_capped_sends_does_not_lengthen_the_next_count(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = (await services.tenants.create("flood", Plan.STARTUP))[0].id
    await _capped_category(services, tenant_id)
    recipient, _ = await services.recipients.put(tenant_id, "flooded", {"email": ADDRESS})
    now = as_datetime(clock.now())
    async with services.db.transaction() as conn:
        seed: dict[str, object] = {"tenant": tenant_id, "address": ADDRESS, "now": now}
        seed |= {"recipient": recipient.id, "old": now - timedelta(days=2), "flood": FLOOD}
        await conn.execute(text(_SEED), seed)
        await conn.execute(text("ANALYZE jobs"))
    since = now - timedelta(seconds=CAP["per_seconds"])
    address = (tenant_id, "email", ADDRESS, "digest")
    counts = {
        "address": (address_jobs_query(address, since, 5), "ix_jobs_capped_address"),
        "address alone": (
            address_jobs_query(address, since, 5, bare=True),
            "ix_jobs_capped_address",
        ),
        "recipient": (
            recipient_jobs_query(recipient.id, "digest", since, 5),
            "ix_jobs_capped_recipient",
        ),
    }

    for name, (query, index) in counts.items():
        nodes = await _generic_plan(services, query)
        assert index in {n.get("Index Name") for n in nodes}, (name, nodes)
        read = rows_read(nodes, "jobs")
        assert read <= 2 * CAP["count"], (name, read)  # bare: every other one has a recipient

    kept = await services.jobs.accept(_send(tenant_id, PreferenceCheck(recipient.id, "digest"), 0))
    # 3 by recipient (n = 2, 4, 10) and 3 to the address alone (n = 1, 3, 5) in the window
    assert kept.job.error_class == "frequency_cap"


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_batch_of_a_thousand_capped_people_holds_a_bounded_number_of_locks(
    services: Services, clock: ManualClock
) -> None:
    # PostgreSQL's lock table is shared by every tenant: a batch must not fill it.
    tenant_id = (await services.tenants.create("many", Plan.STARTUP))[0].id
    await _capped_category(services, tenant_id)
    now = as_datetime(clock.now())
    rows = [
        {
            "tenant_id": tenant_id,
            "channel": "email",
            "status": JobStatus.PENDING.value,
            "recipient": f"p{n}@example.com",
            "created_at": now,
        }
        for n in range(1000)
    ]
    checked = [(row, PreferenceCheck(None, "digest")) for row in rows]
    few = [
        ({**row, "recipient": f"q{n}@example.com"}, check)
        for n, (row, check) in enumerate(checked[:3])
    ]

    held = []
    for batch in (checked, few):
        async with services.db.transaction() as conn:
            await unwanted_rows(conn, batch, postgres=True)
            held.append(await advisory_locks_held(conn))

    assert held == [1, 1 + 3]  # the tenant's lock alone; or shared, and one per person
    assert all(row["status"] == JobStatus.PENDING.value for row, _ in checked)
