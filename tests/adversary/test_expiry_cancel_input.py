"""Hostile ``ttl_seconds`` values and cancels: out-of-bound, fractional, textual and
boolean ttls are 422 and store nothing; a default ttl map is bounded like the field;
two cancels racing, or a cancel racing a claim, leave exactly one winner."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson
import pytest
from sqlalchemy import func, select

from homing.models import MAX_TTL_SECONDS, Queue
from homing.services import Services
from homing.store.tables.core import jobs, queue_entries
from tests.admission_helpers import EMAIL, send_email
from tests.conftest import TenantClient, make_tenant
from tests.store_helpers import claim

HOSTILE_TTLS: list[Any] = [
    0,
    -1,
    MAX_TTL_SECONDS + 1,
    10**30,
    1e308,
    60.5,
    60.0,
    "60",
    "1.5",
    "1e3",
    True,
    [60],
    {"seconds": 60},
]


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    """A tenant that can send: an email and an SMS provider stored (a send no provider
    could deliver is refused at accept)."""
    return await make_tenant(services, api, "acme", provider=True)


async def _job_count(services: Services) -> int:
    async with services.db.transaction() as conn:
        return int((await conn.execute(select(func.count()).select_from(jobs))).scalar_one())


@pytest.mark.parametrize("ttl", HOSTILE_TTLS, ids=repr)
async def test_a_hostile_ttl_is_422_on_every_body_and_stores_nothing(
    services: Services, tenant: TenantClient, ttl: Any
) -> None:
    email = await send_email(tenant, json={"ttl_seconds": ttl})
    assert email.status_code == 422, email.text
    webhook = await tenant.post(
        "/v1/notifications/webhook",
        json={"url": "https://hooks.example/x", "payload": {}, "ttl_seconds": ttl},
    )
    assert webhook.status_code == 422, webhook.text
    batch = await tenant.post(
        "/v1/notifications/email/batch", json={"messages": [{**EMAIL, "ttl_seconds": ttl}]}
    )
    assert batch.status_code == 202, batch.text
    assert batch.json()["results"][0]["error"]["code"] == "validation_error"
    sms = {"to": "+14155552671", "body": "code 1234", "ttl_seconds": ttl}
    assert (await tenant.post("/v1/notifications/sms", json=sms)).status_code == 422
    sms_batch = await tenant.post("/v1/notifications/sms/batch", json={"messages": [sms]})
    assert sms_batch.json()["results"][0]["error"]["code"] == "validation_error"
    chat = {"to": "4242", "text": "hi", "ttl_seconds": ttl}
    assert (await tenant.post("/v1/notifications/chat", json=chat)).status_code == 422
    assert await _job_count(services) == 0


async def test_the_ttl_bounds_themselves_are_accepted(tenant: TenantClient) -> None:
    for ttl in (1, MAX_TTL_SECONDS, None):
        response = await send_email(tenant, json={"ttl_seconds": ttl, "subject": f"s{ttl}"})
        assert response.status_code == 202, response.text


@pytest.mark.parametrize(
    "ttls",
    [
        {"email": 0},
        {"email": MAX_TTL_SECONDS + 1},
        {"email": "60"},
        {"email": 1.5},
        {"email": True},
        {"fax": 60},
        {"email": {"nested": 60}},
        {f"channel{i}": 60 for i in range(200)},
        ["email", 60],
        None,
    ],
    ids=lambda t: repr(t)[:40],
)
async def test_a_hostile_default_ttl_is_422_and_keeps_the_old_one(
    tenant: TenantClient, ttls: Any
) -> None:
    kept = {"default_ttl_seconds": {"email": 600}}
    assert (await tenant.patch("/v1/settings", json=kept)).status_code == 200
    response = await tenant.patch("/v1/settings", json={"default_ttl_seconds": ttls})
    assert response.status_code == 422, response.text
    assert (await tenant.get("/v1/settings")).json()["default_ttl_seconds"] == {"email": 600}


async def test_a_cancel_with_a_hostile_id_is_refused_as_a_read_is(tenant: TenantClient) -> None:
    for job_id in ("x" * 4000, "' OR 1=1 --", "0" * 36):
        response = await tenant.post(f"/v1/jobs/{job_id}/cancel")
        assert response.status_code == 404, response.text
    # A NUL no database compares: the same 4xx as reading that id (422 on PostgreSQL).
    cancel = await tenant.post("/v1/jobs/%00/cancel")
    read = await tenant.get("/v1/jobs/%00")
    assert cancel.status_code == read.status_code
    assert cancel.status_code in (404, 422)


async def _sent(tenant: TenantClient, n: int) -> list[str]:
    ids = []
    for i in range(n):
        response = await send_email(tenant, json={"subject": f"race {i}"})
        assert response.status_code == 202, response.text
        ids.append(response.json()["id"])
    return ids


@pytest.mark.sql("two cancels at once: one conditional UPDATE wins")
async def test_two_concurrent_cancels_have_one_winner(
    services: Services, tenant: TenantClient
) -> None:
    for job_id in await _sent(tenant, 5):
        first, second = await asyncio.gather(
            tenant.post(f"/v1/jobs/{job_id}/cancel"), tenant.post(f"/v1/jobs/{job_id}/cancel")
        )
        assert sorted([first.status_code, second.status_code]) == [200, 409]


@pytest.mark.sql("a cancel racing the claim statement")
async def test_a_cancel_racing_a_claim_leaves_one_consistent_winner(
    services: Services, tenant: TenantClient
) -> None:
    ids = await _sent(tenant, 8)
    cancels = [tenant.post(f"/v1/jobs/{job_id}/cancel") for job_id in ids]
    results = await asyncio.gather(claim(services.queue, Queue.EMAIL, 100, 30), *cancels)
    claimed = {c.job.id for c in results[0]}
    codes = dict(zip(ids, [r.status_code for r in results[1:]], strict=True))
    async with services.db.transaction() as conn:
        status = dict((await conn.execute(select(jobs.c.id, jobs.c.status))).all())
        entries = set((await conn.scalars(select(queue_entries.c.job_id))).all())
    for job_id in ids:
        if codes[job_id] == 200:
            assert job_id not in claimed and job_id not in entries
            assert status[job_id] == "CANCELLED"
        else:
            assert codes[job_id] == 409
            assert job_id in claimed and job_id in entries
            assert status[job_id] == "PROCESSING"


async def test_a_body_without_ttl_hashes_as_it_did_before_ttl_existed(
    services: Services, tenant: TenantClient
) -> None:
    key = {"Idempotency-Key": "from-before-ttl"}
    first = await send_email(tenant, headers=key)
    assert first.status_code == 202, first.text
    # The email fields as they were hashed before ttl_seconds was a field.
    before = {
        **{name: None for name in ("html", "priority", "provider", "fallback", "ordering_key")},
        "delivery": "at_least_once",
        **EMAIL,
    }
    expected = services.sealer.request_hash(orjson.dumps(before, option=orjson.OPT_SORT_KEYS))
    async with services.db.transaction() as conn:
        stored = await conn.scalar(
            select(jobs.c.request_hash).where(jobs.c.id == first.json()["id"])
        )
    assert stored == expected.stored
    # The same key with a ttl is another request.
    other = await send_email(tenant, json={"ttl_seconds": 60}, headers=key)
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_conflict"
