"""The per-tenant request rate on the sending endpoints: SQLite with memory windows,
PostgreSQL with Redis windows."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from homing.models import Plan
from homing.services import Services
from homing.settings import Settings
from tests.admission_helpers import EMAIL, admission_settings, send_email, usage
from tests.conftest import TenantClient, make_tenant, stored_provider

RATE_HEADERS = ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy")


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return admission_settings(database_url, tmp_path, secret_key)


async def test_the_sixth_request_in_a_minute_from_a_free_tenant_is_429(
    services: Services, api: httpx.AsyncClient
) -> None:
    free = await make_tenant(services, api, "free", Plan.FREE, provider=True)
    started = time.time()
    for n in range(5):
        response = await send_email(free)
        assert response.status_code == 202, response.text
        assert response.headers["RateLimit-Limit"] == "5"
        assert response.headers["RateLimit-Remaining"] == str(4 - n)
        assert response.headers["RateLimit-Policy"] == "5;w=60"
    refused = await send_email(free)
    elapsed = time.time() - started
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "rate_limited"
    assert error["details"]["limit"] == 5
    retry_after = int(refused.headers["Retry-After"])
    # The first of the five leaves the 60 s window 60 s after it was admitted.
    assert 60 - elapsed - 1 <= retry_after <= 60
    assert refused.headers["RateLimit-Remaining"] == "0"
    assert int(refused.headers["RateLimit-Reset"]) == retry_after
    assert (await usage(free))["used"]["email"] == 5


async def test_every_response_of_a_sending_endpoint_carries_the_rate_headers(
    services: Services, api: httpx.AsyncClient
) -> None:
    tenant = await make_tenant(services, api, "acme", Plan.INDIE, provider=True)
    responses = [
        await send_email(tenant),
        await send_email(tenant, json={"to": "not an address"}),
        await send_email(tenant, json={"provider": "nope"}),
        await tenant.post(
            "/v1/notifications/email",
            content=b"{not json",
            headers={"Content-Type": "application/json"},
        ),
        await tenant.post("/v1/notifications/email/batch", json={"messages": [EMAIL]}),
    ]
    assert [r.status_code for r in responses] == [202, 422, 422, 422, 202]
    for n, response in enumerate(responses):
        assert all(h in response.headers for h in RATE_HEADERS), response.headers
        assert response.headers["RateLimit-Remaining"] == str(50 - 1 - n)
    assert "RateLimit-Limit" not in (await tenant.get("/v1/jobs")).headers


async def test_invalid_and_refused_requests_still_count_toward_the_rate(
    services: Services, api: httpx.AsyncClient
) -> None:
    free = await make_tenant(services, api, "free", Plan.FREE, provider=True)
    for _ in range(5):
        assert (await send_email(free, json={"subject": ""})).status_code == 422
    assert (await send_email(free)).status_code == 429
    assert (await usage(free))["used"]["email"] == 0


async def test_a_batch_counts_once_toward_the_rate_and_each_message_toward_quota(
    services: Services, api: httpx.AsyncClient
) -> None:
    free = await make_tenant(services, api, "free", Plan.FREE, provider=True)
    response = await free.post("/v1/notifications/email/batch", json={"messages": [EMAIL] * 7})
    assert response.status_code == 202
    assert response.headers["RateLimit-Remaining"] == "4"
    report = await usage(free)
    assert report["used"]["email"] == 7
    assert report["rate_limit"]["remaining"] == 4
    [quota] = [q for q in report["quotas"] if q["name"] == "email+webhook"]
    assert (quota["used"], quota["remaining"]) == (7, 93)


async def test_tenants_have_windows_of_their_own(
    services: Services, api: httpx.AsyncClient
) -> None:
    first = await make_tenant(services, api, "one", Plan.FREE, provider=True)
    second = await make_tenant(services, api, "two", Plan.FREE, provider=True)
    for _ in range(5):
        assert (await send_email(first)).status_code == 202
    assert (await send_email(first)).status_code == 429
    assert (await send_email(second)).status_code == 202


async def test_a_custom_rate_limit_overrides_the_plan(
    services: Services, api: httpx.AsyncClient
) -> None:
    tenant, key = await services.tenants.create("custom", Plan.STARTUP, rate_limit_per_minute=2)
    await stored_provider(services, tenant.id)
    client = TenantClient(api, tenant.id, key)
    assert [(await send_email(client)).status_code for _ in range(3)] == [202, 202, 429]


async def test_without_a_valid_key_nothing_is_counted(
    services: Services, api: httpx.AsyncClient
) -> None:
    response = await api.post(
        "/v1/notifications/email", json=EMAIL, headers={"Authorization": "Bearer hk_nope"}
    )
    assert response.status_code == 401
    assert "RateLimit-Limit" not in response.headers
    missing = await api.post("/v1/notifications/email", json=EMAIL)
    assert missing.status_code == 401
    assert missing.json()["error"]["code"] == "unauthenticated"
