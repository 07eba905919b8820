"""A worker-only process's HTTP face (``HOMING_METRICS_PORT``): ``/metrics`` and a
``/readyz`` that needs the worker loop going round, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from homing.cli.metrics_server import metrics_serving
from homing.clock import Heartbeat
from homing.services import Services
from homing.settings import Settings
from tests.fixtures import settings_for
from tests.metrics_helpers import scrape, value
from tests.processes import eventually

TOKEN = "metrics-token-0123456789"


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(database_url, tmp_path, secret_key, metrics_port=0)


@pytest.fixture
async def client(services: Services) -> AsyncIterator[httpx.AsyncClient]:
    async with metrics_serving(services) as port:
        assert port is not None
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
            yield http


async def test_readyz_is_503_stopped_until_the_worker_loop_runs_then_200(
    services: Services, client: httpx.AsyncClient
) -> None:
    before = await client.get("/readyz")
    assert before.status_code == 503
    assert before.json()["error"]["details"]["checks"]["worker"] == "stopped"
    stop = asyncio.Event()
    running = asyncio.create_task(services.worker().run(stop=stop))
    try:

        async def ready() -> bool:
            return (await client.get("/readyz")).status_code == 200

        await eventually(ready, what="the worker loop to go round")
        body = (await client.get("/readyz")).json()
        assert body["checks"]["worker"] == "ok" and body["checks"]["database"] == "ok"
    finally:
        stop.set()
        await running


async def test_readyz_is_503_stalled_when_the_loop_stops_going_round(
    services: Services, client: httpx.AsyncClient
) -> None:
    now = [100.0]
    services.heartbeat = Heartbeat(now=lambda: now[0])
    services.heartbeat.beat()
    assert (await client.get("/readyz")).status_code == 200
    now[0] += services.settings.worker.ready_stall_seconds + 1
    stalled = await client.get("/readyz")
    assert stalled.status_code == 503
    assert stalled.json()["error"]["details"]["checks"]["worker"] == "stalled"


async def test_metrics_answers_the_scrape_with_the_queue_sampled(
    client: httpx.AsyncClient,
) -> None:
    text = await scrape(client)
    assert value(text, "homing_queue_depth", queue="notifications-email", priority="low") == 0
    assert "# TYPE homing_provider_calls_total counter" in text
    assert (await client.get("/anything")).status_code == 404
    assert (await client.post("/metrics", content=b"x" * 4096)).status_code in (405, 413)


async def test_without_a_metrics_port_nothing_is_served(services: Services) -> None:
    services.settings = services.settings.changed(metrics_port=None)
    async with metrics_serving(services) as port:
        assert port is None


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_with_a_token_the_worker_scrape_needs_it(
    services: Services, tmp_path: Path, secret_key: str
) -> None:
    services.settings = services.settings.changed(metrics_token=SecretStr(TOKEN))
    async with metrics_serving(services) as port:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
            refused = await http.get("/metrics")
            assert refused.status_code == 401
            assert refused.json()["error"]["code"] == "unauthenticated"
            assert TOKEN not in refused.text
            wrong = await http.get("/metrics", headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401
            await scrape(http, headers={"Authorization": f"Bearer {TOKEN}"})
