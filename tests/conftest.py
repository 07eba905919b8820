"""Shared fixtures: databases (SQLite always, PostgreSQL for real), services, sandbox."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from sqlalchemy import text

from homing.api.app import create_app
from homing.clock import ManualClock
from homing.crypto import generate_master_key
from homing.models import Plan
from homing.services import Services, build
from homing.settings import Settings

POSTGRES_URL = os.environ.get(
    "HOMING_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("HOMING_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")

TABLES = (
    "inbound_nonces",
    "inbound_conflicts",
    "inbound_events",
    "suppressions",
    "sending_domains",
    "provider_inbound",
    "attempts",
    "dead_letters",
    "queue_entries",
    "jobs",
    "webhook_secrets",
    "webhook_gone_endpoints",
    "provider_accounts",
    "usage_counters",
    "api_keys",
    "tenant_settings",
    "tenants",
)


def _plain_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


async def _recreate_database(name: str) -> None:
    admin = await asyncpg.connect(_plain_dsn(POSTGRES_URL))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()


async def _drop_database(name: str) -> None:
    admin = await asyncpg.connect(_plain_dsn(POSTGRES_URL))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture(scope="session")
def postgres_url(worker_id: str) -> Iterator[str]:
    """A database of this test process's own, created fresh and dropped at the end.

    The name carries the process id, so concurrent test runs on one server never
    share (or drop) each other's database. PostgreSQL must be running: the suite
    fails (it does not skip) when it is not.
    """
    name = f"homing_test_{worker_id}_{os.getpid()}"
    asyncio.run(_recreate_database(name))
    base, _, _ = POSTGRES_URL.rpartition("/")
    yield f"{base}/{name}"
    asyncio.run(_drop_database(name))


@pytest.fixture(
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'homing.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def secret_key() -> str:
    return generate_master_key()


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=database_url,
        provider_allowed_networks="127.0.0.0/8,::1/128",
        data_dir=tmp_path / "data",
        secret_key=secret_key,
        retry_base_seconds=10,
        max_attempts=3,
        lease_seconds=30,
        provider_timeout_seconds=2,
        alert_batch_seconds=0,
        poll_interval_seconds=0.05,
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


async def _truncate(services: Services) -> None:
    async with services.db.transaction() as conn:
        if services.db.is_sqlite:
            for table in TABLES:
                await conn.execute(text(f"DELETE FROM {table}"))
        else:
            await conn.execute(text(f"TRUNCATE {', '.join(TABLES)} CASCADE"))


@pytest.fixture
async def services(settings: Settings, clock: ManualClock) -> AsyncIterator[Services]:
    built = await build(settings, clock=clock)
    await _truncate(built)
    try:
        yield built
    finally:
        await built.aclose()


@pytest.fixture
async def api(services: Services) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(services))
    async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as client:
        yield client


class TenantClient:
    """An API client authenticated as one tenant."""

    def __init__(self, api: httpx.AsyncClient, tenant_id: str, key: str) -> None:
        self.api = api
        self.tenant_id = tenant_id
        self.key = key
        self.headers = {"Authorization": f"Bearer {key}"}

    async def get(self, path: str, **kw: Any) -> httpx.Response:
        return await self.api.get(path, headers={**self.headers, **kw.pop("headers", {})}, **kw)

    async def post(self, path: str, **kw: Any) -> httpx.Response:
        return await self.api.post(path, headers={**self.headers, **kw.pop("headers", {})}, **kw)

    async def patch(self, path: str, **kw: Any) -> httpx.Response:
        return await self.api.patch(path, headers={**self.headers, **kw.pop("headers", {})}, **kw)

    async def delete(self, path: str, **kw: Any) -> httpx.Response:
        return await self.api.delete(path, headers={**self.headers, **kw.pop("headers", {})}, **kw)


async def make_tenant(
    services: Services, api: httpx.AsyncClient, name: str, plan: Plan = Plan.STARTUP
) -> TenantClient:
    tenant, key = await services.tenants.create(name, plan)
    return TenantClient(api, tenant.id, key)


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    return await make_tenant(services, api, "acme")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _no_proxy_env() -> Iterator[None]:
    # httpx honours proxy variables; tests only ever talk to loopback.
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.lower().endswith("_proxy")}
    yield
    os.environ.update(saved)
