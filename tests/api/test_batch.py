"""POST /v1/notifications/email/batch: up to 1,000 emails, one transaction, a result each."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

import homing.addresses as addresses
from homing.models import Plan, Priority
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import jobs, queue_entries
from tests.admission_helpers import EMAIL, admission_settings, send_email, usage
from tests.conftest import TenantClient, make_tenant

BATCH = "/v1/notifications/email/batch"


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return admission_settings(database_url, tmp_path, secret_key)


async def _counts(services: Services) -> tuple[int, int]:
    async with services.db.transaction() as conn:
        job_count = (await conn.execute(select(func.count()).select_from(jobs))).scalar_one()
        entries = (await conn.execute(select(func.count()).select_from(queue_entries))).scalar()
    return int(job_count), int(entries or 0)


def _item(n: int, **extra: Any) -> dict[str, Any]:
    return {**EMAIL, "to": f"user{n}@example.com", **extra}


async def test_a_thousand_emails_are_accepted_in_one_request(
    services: Services, tenant: TenantClient
) -> None:
    response = await tenant.post(BATCH, json={"messages": [_item(n) for n in range(1000)]})
    assert response.status_code == 202, response.text
    body = response.json()
    assert (body["accepted"], body["replayed"], body["rejected"]) == (1000, 0, 0)
    assert [r["index"] for r in body["results"]] == list(range(1000))
    assert all(r["status"] == "PENDING" and "error" not in r for r in body["results"])
    assert len({r["id"] for r in body["results"]}) == 1000
    assert await _counts(services) == (1000, 1000)
    assert (await usage(tenant))["used"]["email"] == 1000


async def test_more_than_a_thousand_or_none_is_422(tenant: TenantClient) -> None:
    for messages in ([EMAIL] * 1001, []):
        response = await tenant.post(BATCH, json={"messages": messages})
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "validation_error"


async def test_each_message_gets_its_own_result(services: Services, tenant: TenantClient) -> None:
    assert (await send_email(tenant, headers={"Idempotency-Key": "k-old"})).status_code == 202
    messages = [
        _item(0),
        {**EMAIL, "to": "not an address"},
        _item(2, provider="nope"),
        {**EMAIL, "idempotency_key": "k-old"},
        _item(4, idempotency_key="k-new"),
        _item(4, idempotency_key="k-new"),
        _item(6, idempotency_key="k-new"),
        {**EMAIL, "idempotency_key": "k-old", "subject": "changed"},
        {"to": "a@b.co"},
    ]
    body = (await tenant.post(BATCH, json={"messages": messages})).json()
    results = body["results"]
    assert (body["accepted"], body["replayed"], body["rejected"]) == (2, 2, 5)
    codes = [r.get("error", {}).get("code") for r in results]
    assert codes == [
        None,
        "validation_error",
        "unknown_provider",
        None,
        None,
        None,
        "idempotency_conflict",
        "idempotency_conflict",
        "validation_error",
    ]
    assert results[3]["replayed"] is True and "replayed" not in results[4]
    assert results[5]["id"] == results[4]["id"] and results[5]["replayed"] is True
    assert results[1]["error"]["details"]["errors"][0]["field"] == ""
    assert (await usage(tenant))["used"]["email"] == 3
    assert await _counts(services) == (3, 3)


async def test_a_repeated_batch_is_replayed_and_uses_no_quota(
    services: Services, tenant: TenantClient
) -> None:
    messages = [_item(n, idempotency_key=f"b-{n}") for n in range(50)]
    first = (await tenant.post(BATCH, json={"messages": messages})).json()
    again = (await tenant.post(BATCH, json={"messages": messages})).json()
    assert (again["accepted"], again["replayed"]) == (0, 50)
    assert [r["id"] for r in again["results"]] == [r["id"] for r in first["results"]]
    assert (await usage(tenant))["used"]["email"] == 50


@pytest.mark.sql("concurrent batches against the idempotency keys' unique index")
async def test_concurrent_batches_with_the_same_keys_store_each_message_once(
    services: Services, tenant: TenantClient
) -> None:
    messages = [_item(n, idempotency_key=f"c-{n}") for n in range(100)]
    responses = await asyncio.gather(
        *(tenant.post(BATCH, json={"messages": messages}) for _ in range(4))
    )
    assert [r.status_code for r in responses] == [202] * 4
    assert sum(r.json()["accepted"] for r in responses) == 100
    ids = {tuple(item["id"] for item in r.json()["results"]) for r in responses}
    assert len(ids) == 1
    assert await _counts(services) == (100, 100)
    assert (await usage(tenant))["used"]["email"] == 100


async def test_a_free_tenants_batch_is_low_priority(
    services: Services, api: httpx.AsyncClient
) -> None:
    free = await make_tenant(services, api, "free", Plan.FREE, provider=True)
    body = (
        await free.post(BATCH, json={"messages": [_item(0, priority="CRITICAL"), _item(1)]})
    ).json()
    for result in body["results"]:
        job, _ = await services.jobs.get(free.tenant_id, result["id"])
        assert job.priority is Priority.LOW


async def test_each_address_of_a_batch_is_read_once(
    services: Services, tenant: TenantClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sender repeated in every message is parsed once for the request, and each
    recipient once (the store checks suppressions by the key read with it); the jobs
    still carry each address in canonical form and are suppressed by that key."""
    read: list[str] = []
    split = addresses._split  # every parse of an address starts here

    def counted(text: str) -> tuple[str, str]:
        read.append(text)
        return split(text)

    monkeypatch.setattr(addresses, "_split", counted)
    messages = [_item(n, **{"from": "Homing <Bench@Example.COM>"}) for n in range(50)]
    response = await tenant.post(BATCH, json={"messages": messages})
    assert response.status_code == 202, response.text
    assert sorted(read) == sorted(["Homing <Bench@Example.COM>", *(m["to"] for m in messages)])
    async with services.db.transaction() as conn:
        stored = (await conn.execute(select(jobs.c.payload, jobs.c.recipient))).all()
    assert {row.payload["from"] for row in stored} == {"Homing <Bench@example.com>"}
    assert sorted(row.recipient for row in stored) == sorted(m["to"] for m in messages)
