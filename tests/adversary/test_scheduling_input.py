"""Hostile ``send_at`` values and reschedules (docs/scheduling.md): times that do not
exist, absurd offsets, the far future and huge strings are 422 and store nothing; a
flood of scheduled jobs from one tenant does not delay another's due job; a PATCH of
another tenant's job is 404; a PATCH racing the worker's claim has exactly one winner."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any, cast

import httpx
import pytest
from sqlalchemy import func, select

from homing.models import ClaimedJob, Queue
from homing.services import Services
from homing.store.tables.core import jobs, queue_entries
from tests.admission_helpers import EMAIL, send_email
from tests.conftest import TenantClient, make_tenant
from tests.store_helpers import claim

HOSTILE_SEND_ATS: list[Any] = [
    # Times that do not exist.
    "2026-02-30T10:00:00Z",
    "2026-13-01T10:00:00Z",
    "2026-06-01T24:00:00Z",
    "2026-06-30T23:59:60Z",
    "0000-01-01T00:00:00Z",
    # Absurd or missing offsets.
    "2026-06-01T10:00:00+24:00",
    "2026-06-01T10:00:00+99:99",
    "2026-06-01T10:00:00-23:60",
    "2026-06-01T10:00:00+0200",
    "2026-06-01T10:00:00+02",
    "2026-06-01T10:00:00",
    "2026-06-01",
    "2026-W22-1T10:00:00Z",
    # Beyond any calendar a database stores, or before the epoch.
    "9999-12-31T23:59:59-23:59",
    "+275760-09-13T00:00:00Z",
    "1969-12-31T23:59:59Z",
    "0001-01-01T00:00:00+23:59",
    # Not text, or huge.
    1780000000,
    1.78e9,
    True,
    ["2026-06-01T10:00:00Z"],
    {"at": "2026-06-01T10:00:00Z"},
    "2026-06-01T10:00:00.1234567890Z",
    "2026-06-01T10:00:00Z" + " " * 100,
    "2026-06-01T10:00:00Z\x00",
    "9" * 1_000_000,
]


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    """A tenant that can send: an email and an SMS provider stored (a send no provider
    could deliver is refused at accept)."""
    return await make_tenant(services, api, "acme", provider=True)


async def _job_count(services: Services) -> int:
    async with services.db.transaction() as conn:
        return int((await conn.execute(select(func.count()).select_from(jobs))).scalar_one())


@pytest.mark.parametrize("send_at", HOSTILE_SEND_ATS, ids=lambda v: repr(v)[:40])
async def test_a_hostile_send_at_is_422_on_every_body_and_stores_nothing(
    services: Services, tenant: TenantClient, send_at: Any
) -> None:
    email = await send_email(tenant, json={"send_at": send_at})
    assert email.status_code == 422, email.text
    assert email.json()["error"]["code"] == "validation_error"
    assert "9999999" not in email.text  # the value is not echoed back
    webhook = await tenant.post(
        "/v1/notifications/webhook",
        json={"url": "https://hooks.example/x", "payload": {}, "send_at": send_at},
    )
    assert webhook.status_code == 422, webhook.text
    sms = {"to": "+14155552671", "body": "code 1234", "send_at": send_at}
    assert (await tenant.post("/v1/notifications/sms", json=sms)).status_code == 422
    chat = {"to": "4242", "text": "hi", "send_at": send_at}
    assert (await tenant.post("/v1/notifications/chat", json=chat)).status_code == 422
    batch = await tenant.post(
        "/v1/notifications/email/batch", json={"messages": [{**EMAIL, "send_at": send_at}]}
    )
    assert batch.json()["results"][0]["error"]["code"] == "validation_error"
    assert await _job_count(services) == 0


@pytest.mark.parametrize(
    "send_at", ["2099-01-01T00:00:00Z", "9998-12-31T23:59:59+23:59", "2200-06-01T10:00:00-23:59"]
)
async def test_the_far_future_is_send_at_too_far_and_stores_nothing(
    services: Services, tenant: TenantClient, send_at: str
) -> None:
    email = await send_email(tenant, json={"send_at": send_at})
    assert email.status_code == 422, email.text
    assert email.json()["error"]["code"] == "send_at_too_far"
    assert await _job_count(services) == 0


async def test_the_widest_offsets_are_one_moment(services: Services, tenant: TenantClient) -> None:
    # 23:59 ahead of UTC and 23:59 behind name instants two days apart, both valid.
    today = datetime.now(UTC).date()
    east = f"{today.isoformat()}T23:59:00+23:59"
    west = f"{today.isoformat()}T00:00:00-23:59"
    for value in (east, west):
        response = await send_email(tenant, json={"send_at": value, "subject": value})
        assert response.status_code == 202, response.text


async def test_an_ordering_key_and_a_send_at_together_are_refused(tenant: TenantClient) -> None:
    body = {"send_at": "2030-01-01T00:00:00Z", "ordering_key": "k"}
    response = await send_email(tenant, json=body)
    assert response.status_code == 422, response.text


async def test_a_send_at_flood_does_not_delay_another_tenants_due_job(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    later = datetime.fromtimestamp(services.clock.now() + 3600, UTC).isoformat()
    flood = [{**EMAIL, "subject": f"later {i}", "send_at": later} for i in range(1000)]
    for _ in range(3):
        batch = await tenant.post("/v1/notifications/email/batch", json={"messages": flood})
        assert batch.json()["accepted"] == 1000, batch.text
    other = await make_tenant(services, api, "other", provider=True)
    due = await send_email(other)
    assert due.status_code == 202, due.text
    # The first claim, of a batch of one, takes the other tenant's job: the 3,000
    # waiting entries are not due, so they are not in its way.
    [claimed] = await claim(services.queue, Queue.EMAIL, 1, 30)
    assert claimed.job.id == due.json()["id"]
    assert await claim(services.queue, Queue.EMAIL, 100, 30) == []


async def _scheduled(tenant: TenantClient, at: float, n: int = 1) -> list[str]:
    ids = []
    for i in range(n):
        send_at = datetime.fromtimestamp(at, UTC).isoformat()
        response = await send_email(tenant, json={"send_at": send_at, "subject": f"s{i}"})
        assert response.status_code == 202, response.text
        ids.append(response.json()["id"])
    return ids


async def test_a_patch_of_another_tenants_job_is_404_and_changes_nothing(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    [job_id] = await _scheduled(tenant, services.clock.now() + 600)
    other = await make_tenant(services, api, "other", provider=True)
    sooner = datetime.fromtimestamp(services.clock.now(), UTC).isoformat()
    response = await other.patch(f"/v1/jobs/{job_id}", json={"send_at": sooner})
    assert response.status_code == 404, response.text
    assert (await tenant.get(f"/v1/jobs/{job_id}")).json()["send_at"] != sooner
    for hostile in ("x" * 4000, "' OR 1=1 --", "0" * 36):
        answer = await tenant.patch(f"/v1/jobs/{hostile}", json={"send_at": sooner})
        assert answer.status_code == 404, answer.text


@pytest.mark.parametrize(
    "body", [{}, {"send_at": None}, {"send_at": "x" * 100_000}, {"send_at": "now", "extra": 1}]
)
async def test_a_hostile_patch_body_is_422(
    services: Services, tenant: TenantClient, body: dict[str, Any]
) -> None:
    [job_id] = await _scheduled(tenant, services.clock.now() + 600)
    response = await tenant.patch(f"/v1/jobs/{job_id}", json=body)
    assert response.status_code == 422, response.text


@pytest.mark.sql("a reschedule racing the claim statement")
async def test_a_patch_racing_the_claim_has_exactly_one_winner(
    services: Services, tenant: TenantClient
) -> None:
    # Due now: the claim may take each; the PATCH would move each an hour ahead.
    ids = await _scheduled(tenant, services.clock.now() - 1, n=8)
    later = datetime.fromtimestamp(services.clock.now() + 3600, UTC).isoformat()
    patches = [tenant.patch(f"/v1/jobs/{job_id}", json={"send_at": later}) for job_id in ids]
    won, *answers = await asyncio.gather(claim(services.queue, Queue.EMAIL, 100, 30), *patches)
    claimed = {c.job.id for c in cast(list[ClaimedJob], won)}
    codes = {
        job_id: cast(httpx.Response, r).status_code for job_id, r in zip(ids, answers, strict=True)
    }
    async with services.db.transaction() as conn:
        status = dict((await conn.execute(select(jobs.c.id, jobs.c.status))).all())
        due = dict(
            (await conn.execute(select(queue_entries.c.job_id, queue_entries.c.available_at))).all()
        )
    for job_id in ids:
        if codes[job_id] == 200:
            assert job_id not in claimed
            assert status[job_id] == "PENDING"
            assert due[job_id] > time.time() + 3000
        else:
            assert codes[job_id] == 409
            assert job_id in claimed
            assert status[job_id] == "PROCESSING"
    assert claimed | {j for j, c in codes.items() if c == 200} == set(ids)
