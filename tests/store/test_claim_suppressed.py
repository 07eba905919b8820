"""A claim round ends the jobs whose recipient was suppressed while they waited, in its
own transaction (homing.store.claiming), whether the suppression names the address or,
once the address was erased, its keyed hash (docs/recipients.md, "Erasure")."""

from __future__ import annotations

from sqlalchemy import select

from homing.channels import Channel
from homing.clock import as_datetime
from homing.crypto import AddressRefs
from homing.models import JobStatus, Queue
from homing.services import Services
from homing.store.suppressions import add_suppression
from homing.store.tables.core import jobs, queue_entries
from tests.conftest import TenantClient, stored_provider
from tests.e2e.conftest import send


async def _suppress(services: Services, tenant_id: str, address: str) -> None:
    async with services.db.transaction() as conn:
        await add_suppression(
            conn,
            {
                "tenant_id": tenant_id,
                "channel": Channel.EMAIL.value,
                "address": address,
                "reason": "manual",
                "source": "test",
                "created_at": as_datetime(services.clock.now()),
            },
        )


async def test_a_claim_ends_jobs_to_an_address_suppressed_or_erased_since_accept(
    services: Services, tenant: TenantClient
) -> None:
    await stored_provider(services, tenant.tenant_id)
    plain = await send(tenant, to="plain@example.com")
    erased = await send(tenant, to="erased@example.com")
    kept = await send(tenant, to="kept@example.com")
    refs = AddressRefs.of(services.sealer)
    await _suppress(services, tenant.tenant_id, "plain@example.com")
    hashed = refs.hashed(tenant.tenant_id, Channel.EMAIL.value, "erased@example.com")
    await _suppress(services, tenant.tenant_id, hashed)

    claim = await services.queue.claim_ready([Queue.EMAIL], 10, 30)

    assert [c.job.id for c in claim.jobs] == [kept]
    assert sorted(c.job.id for c in claim.suppressed) == sorted([plain, erased])
    assert claim.size == 3
    assert set(claim.accounts) == {tenant.tenant_id}
    assert claim.suspended == set()
    async with services.db.transaction() as conn:
        rows = (await conn.execute(select(jobs.c.id, jobs.c.status))).all()
        entries = {row[0] for row in await conn.execute(select(queue_entries.c.job_id))}
    statuses = dict(rows)
    assert statuses[plain] == statuses[erased] == JobStatus.SUPPRESSED.value
    assert statuses[kept] == JobStatus.PROCESSING.value
    assert entries == {kept}
