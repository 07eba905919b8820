"""``/readyz``: 200 only when the database, its migrations, Redis (when configured) and
this process's worker loop (when it runs one) are all well; 503 naming what is not."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from homing.api.app import create_app
from homing.clock import Heartbeat
from homing.services import Services, build
from homing.store.database import Database
from homing.store.migrate import schema_status
from tests.fixtures import settings_for, sqlite_url
from tests.outage.servers import RedisServer
from tests.processes import eventually, free_port


async def _ready(api: httpx.AsyncClient) -> tuple[int, dict[str, Any]]:
    response = await api.get("/readyz")
    return response.status_code, response.json()


def _failing(body: dict[str, Any]) -> dict[str, str]:
    assert body["error"]["code"] == "unavailable"
    checks: dict[str, str] = body["error"]["details"]["checks"]
    return {name: answer for name, answer in checks.items() if answer != "ok"}


async def test_ready_when_database_and_migrations_are(api: httpx.AsyncClient) -> None:
    status, body = await _ready(api)
    assert status == 200, body
    assert body == {"status": "ok", "checks": {"database": "ok", "migrations": "ok"}}


async def test_database_that_does_not_answer_is_not_ready(
    services: Services, api: httpx.AsyncClient
) -> None:
    working = services.db
    # Nothing listens there: the connection is refused at once, on loopback.
    services.db = Database(f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/none")
    try:
        response = await api.get("/readyz")
    finally:
        await services.db.dispose()
        services.db = working
    assert response.status_code == 503
    assert _failing(response.json()) == {"database": "unavailable", "migrations": "unchecked"}


async def test_database_behind_on_migrations_is_not_ready(
    services: Services, api: httpx.AsyncClient
) -> None:
    async with services.db.transaction() as conn:
        head = (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar_one()
        await conn.execute(text("UPDATE alembic_version SET version_num = '0008'"))
    try:
        assert await schema_status(services.db) == "behind"
        response = await api.get("/readyz")
        assert response.status_code == 503
        assert response.headers["retry-after"]
        assert _failing(response.json()) == {"migrations": "behind"}
    finally:
        async with services.db.transaction() as conn:
            await conn.execute(text("UPDATE alembic_version SET version_num = :h"), {"h": head})
    assert await schema_status(services.db) == "current"


async def test_stalled_worker_loop_is_not_ready(services: Services, api: httpx.AsyncClient) -> None:
    now = [1000.0]
    services.heartbeat = Heartbeat(now=lambda: now[0])
    services.heartbeat.beat()
    status, body = await _ready(api)
    assert (status, body["checks"]["worker"]) == (200, "ok")
    now[0] += services.settings.worker.ready_stall_seconds + 1
    status, body = await _ready(api)
    assert status == 503
    assert _failing(body) == {"worker": "stalled"}
    services.heartbeat.stop()  # no worker loop in this process any more: not checked
    status, body = await _ready(api)
    assert status == 200 and "worker" not in body["checks"]


async def test_running_worker_loop_keeps_the_process_ready(
    services: Services, api: httpx.AsyncClient
) -> None:
    stop = asyncio.Event()
    loop = asyncio.create_task(services.worker().run(stop=stop))
    try:

        async def worker_ok() -> bool:
            status, body = await _ready(api)
            return status == 200 and body["checks"].get("worker") == "ok"

        await eventually(worker_ok, timeout=10, what="/readyz to check the running worker")
    finally:
        stop.set()
        await loop
    assert services.heartbeat.age() is None


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    try:
        server.start()
        yield server
    finally:
        server.destroy()


async def test_redis_down_is_not_ready(
    tmp_path: Path, secret_key: str, own_redis: RedisServer
) -> None:
    settings = settings_for(sqlite_url(tmp_path), tmp_path, secret_key, redis_url=own_redis.url)
    services = await build(settings)
    transport = httpx.ASGITransport(app=create_app(services))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as api:
            status, body = await _ready(api)
            assert status == 200 and body["checks"]["redis"] == "ok", body
            own_redis.stop()
            status, body = await _ready(api)
            assert status == 503
            assert _failing(body) == {"redis": "unavailable"}
    finally:
        await services.aclose()
