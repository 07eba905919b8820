"""``bench.servers.App``: the API as granian serves it in ``python -m bench.servers``,
its services built by the ASGI lifespan from the ``HOMING_*`` settings."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.servers import App


async def test_lifespan_builds_the_services_serves_the_api_and_closes_them(
    database_url: str, secret_key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOMING_DATABASE_URL", database_url)
    monkeypatch.setenv("HOMING_SECRET_KEY", secret_key)
    monkeypatch.setenv("HOMING_DATA_DIR", str(tmp_path))
    app = App()
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["type"])

    lifespan = asyncio.create_task(app({"type": "lifespan"}, inbox.get, send))
    await inbox.put({"type": "lifespan.startup"})
    while not sent:
        await asyncio.sleep(0.01)
    assert sent == ["lifespan.startup.complete"]

    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as client:
        health = await client.get("/healthz")
        refused = await client.post("/v1/notifications/email", json={})
    assert health.status_code == 200
    assert refused.status_code == 401

    await inbox.put({"type": "lifespan.shutdown"})
    await asyncio.wait_for(lifespan, 10)
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
