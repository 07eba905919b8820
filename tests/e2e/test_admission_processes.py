"""Two real ``homing api`` processes sharing PostgreSQL and Redis, and Redis going away."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.api.app import create_app
from homing.clock import ManualClock
from homing.crypto import generate_master_key
from homing.models import Plan
from homing.ratelimit import STORAGE_ERRORS
from homing.services import Services, build
from homing.settings import Settings
from tests.admission_helpers import (
    ADMIN,
    EMAIL,
    ThrowawayRedis,
    admission_settings,
)
from tests.conftest import REDIS_URL, stored_provider
from tests.processes import HomingProcess, eventually, free_port, wait_healthy

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


@pytest.fixture(scope="module")
def secret_key() -> str:
    """One key for the module: the API processes below serve every test of it."""
    return generate_master_key()


@pytest.fixture(scope="module")
def _shared_settings(
    postgres_url: str, tmp_path_factory: pytest.TempPathFactory, secret_key: str
) -> Settings:
    folder = tmp_path_factory.mktemp("admission-processes")
    return admission_settings(postgres_url, folder, secret_key, redis_url=REDIS_URL)


@pytest.fixture
def settings(_shared_settings: Settings) -> Settings:
    return _shared_settings


def _env(settings: Settings, secret_key: str) -> dict[str, str]:
    assert settings.admin_token is not None and settings.redis.url is not None
    return {
        "HOMING_DATABASE_URL": settings.resolved_database_url,
        "HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "HOMING_DATA_DIR": str(settings.data_dir),
        "HOMING_SECRET_KEY": secret_key,
        "HOMING_REDIS_URL": settings.redis.url,
        "HOMING_REDIS_KEY_PREFIX": settings.redis.key_prefix,
        "HOMING_ADMIN_TOKEN": settings.admin_token.get_secret_value(),
        "HOMING_LOG_LEVEL": "warning",
    }


@pytest.fixture(scope="module")
def _api_urls(_shared_settings: Settings, secret_key: str) -> Iterator[list[str]]:
    """Two API processes on one database and one Redis, started once for the module:
    each test works as tenants of its own, so none sees another's limits or keys (the
    per-test ``services`` empties the tables between tests; the processes keep no
    state of a tenant but caches and Redis windows keyed by its id)."""
    ports = [free_port(), free_port()]
    folder = _shared_settings.data_dir.parent
    procs = [
        HomingProcess(["api", "--port", str(port)], _env(_shared_settings, secret_key), log)
        for port, log in zip(ports, (folder / "0.log", folder / "1.log"), strict=True)
    ]
    try:
        for proc in procs:
            proc.start()
        urls = [f"http://127.0.0.1:{p}" for p in ports]
        for url in urls:
            wait_healthy(url, timeout=60, what="the API to start")
        yield urls
    finally:
        for proc in procs:
            proc.stop()


@pytest.fixture
async def apis(services: Services, _api_urls: list[str]) -> AsyncIterator[list[httpx.AsyncClient]]:
    """A client for each of the two API processes."""
    clients = [httpx.AsyncClient(base_url=url, timeout=30) for url in _api_urls]
    try:
        yield clients
    finally:
        for client in clients:
            await client.aclose()


async def _send(client: httpx.AsyncClient, key: str) -> httpx.Response:
    return await client.post(
        "/v1/notifications/email", json=EMAIL, headers={"Authorization": f"Bearer {key}"}
    )


async def _refused_within(client: httpx.AsyncClient, key: str, code: int) -> float:
    """Seconds from now until the first request that ``client`` answers with ``code``
    was sent (not answered: a slow answer on a busy machine is not a late refusal)."""
    started = time.monotonic()
    sent_at = started

    async def refused() -> bool:
        nonlocal sent_at
        sent_at = time.monotonic()
        response = await client.get("/v1/jobs", headers={"Authorization": f"Bearer {key}"})
        return response.status_code == code

    await eventually(refused, timeout=5, what=f"a {code}")
    return sent_at - started


async def test_the_rate_limit_holds_across_two_api_processes(
    services: Services, apis: list[httpx.AsyncClient]
) -> None:
    _tenant, key = await services.tenants.create("free", Plan.FREE)
    await stored_provider(services, _tenant.id)
    codes = [(await _send(apis[n % 2], key)).status_code for n in range(10)]
    assert codes == [202] * 5 + [429] * 5
    other = await _send(apis[0], key)
    assert 50 <= int(other.headers["Retry-After"]) <= 60


async def test_a_quota_holds_across_two_api_processes(
    services: Services, apis: list[httpx.AsyncClient]
) -> None:
    _tenant, key = await services.tenants.create("free", Plan.FREE, rate_limit_per_minute=1000)
    await stored_provider(services, _tenant.id)
    responses = await asyncio.gather(*(_send(apis[n % 2], key) for n in range(200)))
    codes = [r.status_code for r in responses]
    assert (codes.count(202), codes.count(403)) == (100, 100)
    usage = (await apis[1].get("/v1/usage", headers={"Authorization": f"Bearer {key}"})).json()
    assert usage["used"]["email"] == 100


async def test_a_revoked_key_stops_working_on_the_other_process_within_a_second(
    services: Services, apis: list[httpx.AsyncClient]
) -> None:
    _tenant, first_key = await services.tenants.create("acme", Plan.STARTUP)
    await stored_provider(services, _tenant.id)
    owner = {"Authorization": f"Bearer {first_key}"}
    issued = (await apis[0].post("/v1/api-keys", json={"name": "leaked"}, headers=owner)).json()
    leaked = {"Authorization": f"Bearer {issued['key']}"}
    for _ in range(3):  # cached in the second process now
        assert (await apis[1].get("/v1/jobs", headers=leaked)).status_code == 200
    revoked = await apis[0].delete(f"/v1/api-keys/{issued['id']}", headers=owner)
    assert revoked.status_code == 204
    assert await _refused_within(apis[1], issued["key"], 401) < 1.0
    assert (await _send(apis[1], issued["key"])).status_code == 401


async def test_a_suspension_reaches_the_other_process_within_a_second(
    services: Services, apis: list[httpx.AsyncClient]
) -> None:
    tenant, key = await services.tenants.create("acme", Plan.STARTUP)
    await stored_provider(services, tenant.id)
    assert (await _send(apis[1], key)).status_code == 202
    suspended = await apis[0].post(f"/admin/v1/tenants/{tenant.id}/suspend", headers=ADMIN)
    assert suspended.status_code == 200
    assert await _refused_within(apis[1], key, 403) < 1.0


@pytest.mark.parametrize(("policy", "refused_with"), [("open", None), ("closed", 503)])
async def test_redis_stopped_mid_run_gives_the_configured_behaviour_and_no_500(
    database_url: str,
    tmp_path: Path,
    secret_key: str,
    clock: ManualClock,
    policy: str,
    refused_with: int | None,
) -> None:
    redis = await ThrowawayRedis(tmp_path).start()
    settings = admission_settings(
        database_url,
        tmp_path,
        secret_key,
        redis_url=redis.url,
        rate_limit_on_redis_error=policy,
        redis_timeout_seconds=0.5,
    )
    services = await build(settings, clock=clock)
    try:
        _tenant, key = await services.tenants.create("free", Plan.FREE)
        await stored_provider(services, _tenant.id)
        transport = httpx.ASGITransport(app=create_app(services))
        async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as api:
            responses = await _through_an_outage(api, key, redis, policy)
    finally:
        redis.stop()
        await services.aclose()
    before, during = responses
    assert [r.status_code for r in before] == [202, 202]
    assert before[-1].headers["RateLimit-Remaining"] == "3"
    codes = [r.status_code for r in during]
    assert 500 not in codes
    if refused_with is None:
        assert codes == [202] * 5, "failing open admits while Redis is down"
    else:
        assert codes == [refused_with] * 5
        assert during[0].json()["error"]["code"] == "rate_limit_unavailable"
        assert "Retry-After" in during[0].headers
    assert all("RateLimit-Limit" in r.headers for r in during)


async def _through_an_outage(
    api: httpx.AsyncClient, key: str, redis: ThrowawayRedis, policy: str
) -> tuple[list[httpx.Response], list[httpx.Response]]:
    headers = {"Authorization": f"Bearer {key}"}
    send: Any = lambda: api.post("/v1/notifications/email", json=EMAIL, headers=headers)  # noqa: E731
    before = [await send(), await send()]
    redis.stop()
    counted = STORAGE_ERRORS.labels(policy=policy)._value.get()  # type: ignore[attr-defined]
    during = [await send() for _ in range(5)]
    assert STORAGE_ERRORS.labels(policy=policy)._value.get() - counted == 5  # type: ignore[attr-defined]
    return before, during
