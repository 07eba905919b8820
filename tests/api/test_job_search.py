"""Job search: ``GET /v1/jobs`` filters combine, newest first, in pages; the operator's
``GET /admin/v1/jobs`` searches every tenant; ``GET /admin/v1/queues`` counts the queue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.clock import ManualClock, as_datetime
from homing.services import Services
from homing.settings import Settings
from tests.admission_helpers import ADMIN, admission_settings, send_email
from tests.conftest import TenantClient, make_tenant

pytestmark = pytest.mark.sql("the job search's filters and ordering")


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return admission_settings(database_url, tmp_path, secret_key)


async def _sent(client: TenantClient, to: str, key: str | None = None) -> str:
    headers = {"Idempotency-Key": key} if key else {}
    response = await send_email(client, json={"to": to}, headers=headers)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


async def _ids(client: TenantClient | httpx.AsyncClient, path: str, **params: Any) -> list[str]:
    headers = ADMIN if isinstance(client, httpx.AsyncClient) else {}
    response = await client.get(path, params=params, headers=headers)
    assert response.status_code == 200, response.text
    return [j["id"] for j in response.json()["data"]]


async def test_filters_combine_newest_first(tenant: TenantClient, clock: ManualClock) -> None:
    start = as_datetime(clock.now()).isoformat()
    first = await _sent(tenant, "Ada <Ada@Example.com>", key="k-1")
    clock.advance(60)
    middle = as_datetime(clock.now()).isoformat()
    second = await _sent(tenant, "ada@example.com")
    third = await _sent(tenant, "bob@example.com")
    assert await _ids(tenant, "/v1/jobs") == [third, second, first]
    assert await _ids(tenant, "/v1/jobs", to="ADA@example.com") == [second, first]
    assert await _ids(tenant, "/v1/jobs", to="ada@example.com", since=middle) == [second]
    assert await _ids(tenant, "/v1/jobs", since=start, until=middle) == [first]
    assert await _ids(tenant, "/v1/jobs", idempotency_key="k-1") == [first]
    assert await _ids(tenant, "/v1/jobs", idempotency_key="k-1", to="bob@example.com") == []
    assert await _ids(tenant, "/v1/jobs", channel="email", status="PENDING") == [
        third,
        second,
        first,
    ]
    assert await _ids(tenant, "/v1/jobs", channel="sms") == []
    assert await _ids(tenant, "/v1/jobs", status="COMPLETED") == []


async def test_a_search_pages_with_the_cursor(tenant: TenantClient) -> None:
    sent = [await _sent(tenant, "ada@example.com") for _ in range(3)]
    await _sent(tenant, "bob@example.com")
    first = await tenant.get("/v1/jobs", params={"to": "ada@example.com", "limit": 2})
    page = first.json()
    assert [j["id"] for j in page["data"]] == sent[:0:-1]
    rest = await _ids(tenant, "/v1/jobs", to="ada@example.com", cursor=page["next_cursor"])
    assert rest == [sent[0]]


async def test_the_operator_searches_every_tenant(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "other", provider=True)
    mine = await _sent(tenant, "ada@example.com")
    theirs = await _sent(other, "ada@example.com")
    assert await _ids(api, "/admin/v1/jobs", to="ada@example.com") == [theirs, mine]
    assert await _ids(api, "/admin/v1/jobs", tenant_id=tenant.tenant_id) == [mine]
    response = await api.get("/admin/v1/jobs", params={"status": "PENDING"}, headers=ADMIN)
    assert [j["tenant_id"] for j in response.json()["data"]] == [other.tenant_id, tenant.tenant_id]
    assert (await api.get("/admin/v1/jobs")).status_code == 401


async def test_the_queue_view_counts_waiting_entries_by_tenant(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient, clock: ManualClock
) -> None:
    other = await make_tenant(services, api, "other", provider=True)
    for _ in range(2):
        await _sent(tenant, "ada@example.com")
    await _sent(other, "bob@example.com")
    clock.advance(30)
    response = await api.get("/admin/v1/queues", headers=ADMIN)
    assert response.status_code == 200, response.text
    view = response.json()
    waiting = [d for d in view["depths"] if d["state"] == "waiting"]
    assert sum(d["count"] for d in waiting) == 3
    assert all(d["oldest_age_seconds"] >= 30 for d in waiting)
    assert view["top_tenants"] == [
        {"tenant_id": tenant.tenant_id, "waiting": 2},
        {"tenant_id": other.tenant_id, "waiting": 1},
    ]
    assert (await api.get("/admin/v1/queues")).status_code == 401
