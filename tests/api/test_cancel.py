"""``POST /v1/jobs/{id}/cancel``: a PENDING job no worker holds becomes CANCELLED and
is never sent; a held or finished job is 409; another tenant's is 404."""

from __future__ import annotations

from sqlalchemy import select

from homing.clock import ManualClock
from homing.models import Queue
from homing.services import Services
from homing.store.tables.core import queue_entries
from tests.admission_helpers import send_email
from tests.conftest import (
    TenantClient,
    deliver,
    disable_providers,
    job,
    make_tenant,
    stored_provider,
)
from tests.metrics_helpers import Moves, scrape
from tests.store_helpers import claim


async def _send(tenant: TenantClient, **fields: object) -> str:
    response = await send_email(tenant, json=fields)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


async def _entry_ids(services: Services) -> set[str]:
    async with services.db.transaction() as conn:
        return set((await conn.scalars(select(queue_entries.c.job_id))).all())


async def test_a_pending_job_is_cancelled_and_never_sent(
    services: Services, tenant: TenantClient
) -> None:
    job_id = await _send(tenant)
    response = await tenant.post(f"/v1/jobs/{job_id}/cancel")
    assert response.status_code == 200, response.text
    assert (response.json()["id"], response.json()["status"]) == (job_id, "CANCELLED")
    assert response.json()["completed_at"] is not None
    assert await _entry_ids(services) == set()
    assert await deliver(services) == 0
    assert (await job(tenant, job_id))["status"] == "CANCELLED"
    listed = await tenant.get("/v1/jobs", params={"status": "CANCELLED"})
    assert [j["id"] for j in listed.json()["data"]] == [job_id]


async def test_a_cancel_is_counted_as_a_finished_job(tenant: TenantClient) -> None:
    job_id = await _send(tenant)
    before = await scrape(tenant.api)
    assert (await tenant.post(f"/v1/jobs/{job_id}/cancel")).status_code == 200
    assert (await tenant.post(f"/v1/jobs/{job_id}/cancel")).status_code == 409
    moves = Moves(before, await scrape(tenant.api))
    finished = "homing_jobs_finished_total"
    assert moves.moved(finished, channel="email", status="cancelled") == 1


async def test_a_job_a_worker_holds_is_409_and_stays_held(
    services: Services, tenant: TenantClient
) -> None:
    job_id = await _send(tenant)
    [claimed] = await claim(services.queue, Queue.EMAIL, 10, 30)
    assert claimed.job.id == job_id
    response = await tenant.post(f"/v1/jobs/{job_id}/cancel")
    assert response.status_code == 409, response.text
    assert response.json()["error"]["code"] == "conflict"
    assert response.json()["error"]["details"] == {"status": "PROCESSING"}
    assert (await job(tenant, job_id))["status"] == "PROCESSING"
    assert await _entry_ids(services) == {job_id}


async def test_a_finished_job_is_409_and_a_second_cancel_too(
    services: Services, tenant: TenantClient
) -> None:
    failed = await _send(tenant)
    await disable_providers(services, tenant.tenant_id)
    await deliver(services)  # its provider gone since: FAILED no_provider
    assert (await job(tenant, failed))["status"] == "FAILED"
    await stored_provider(services, tenant.tenant_id)
    refused = await tenant.post(f"/v1/jobs/{failed}/cancel")
    assert refused.status_code == 409
    assert refused.json()["error"]["details"] == {"status": "FAILED"}
    pending = await _send(tenant, subject="Again")
    assert (await tenant.post(f"/v1/jobs/{pending}/cancel")).status_code == 200
    twice = await tenant.post(f"/v1/jobs/{pending}/cancel")
    assert twice.status_code == 409
    assert twice.json()["error"]["details"] == {"status": "CANCELLED"}
    # A cancelled job is not FAILED: retry refuses it.
    assert (await tenant.post(f"/v1/jobs/{pending}/retry")).status_code == 409


async def test_another_tenants_job_is_404_and_untouched(
    services: Services, tenant: TenantClient
) -> None:
    other = await make_tenant(services, tenant.api, "other", provider=True)
    job_id = await _send(other)
    response = await tenant.post(f"/v1/jobs/{job_id}/cancel")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert (await job(other, job_id))["status"] == "PENDING"
    assert await _entry_ids(services) == {job_id}


async def test_cancelling_the_head_of_an_ordering_key_releases_the_next(
    services: Services, tenant: TenantClient
) -> None:
    head = await _send(tenant, ordering_key="user-1")
    second = await _send(tenant, ordering_key="user-1", subject="Second")
    assert (await tenant.post(f"/v1/jobs/{head}/cancel")).status_code == 200
    assert [c.job.id for c in await claim(services.queue, Queue.EMAIL, 10, 30)] == [second]


async def test_a_test_key_cancels_its_test_jobs_only(
    services: Services, tenant: TenantClient
) -> None:
    issued = await tenant.post("/v1/api-keys", json={"name": "ci", "test": True})
    test = TenantClient(tenant.api, tenant.tenant_id, issued.json()["key"])
    live_job = await _send(tenant)
    test_job = await _send(test, subject="Test")
    refused = await test.post(f"/v1/jobs/{live_job}/cancel")
    assert refused.status_code == 403
    assert (await job(tenant, live_job))["status"] == "PENDING"
    # The refusal rolled back the entry's delete: the job is still queued.
    assert live_job in await _entry_ids(services)
    assert (await test.post(f"/v1/jobs/{test_job}/cancel")).status_code == 200


async def test_retention_purges_a_cancelled_job_like_any_finished_one(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    job_id = await _send(tenant)
    assert (await tenant.post(f"/v1/jobs/{job_id}/cancel")).status_code == 200
    clock.advance((services.settings.retention.days + 1) * 86_400)
    assert (await services.retention().run()).jobs == 1
    assert (await tenant.get(f"/v1/jobs/{job_id}")).status_code == 404
