"""Webhook fixtures: settings that open loopback, a real local receiver, helpers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.webhooks.receiver import Receiver

OVERLAP_SECONDS = 60


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=database_url,
        provider_allowed_networks="127.0.0.0/8,::1/128",
        data_dir=tmp_path / "data",
        secret_key=SecretStr(secret_key),
        retry_base_seconds=10,
        max_attempts=3,
        lease_seconds=30,
        provider_timeout_seconds=2,
        alert_batch_seconds=0,
        poll_interval_seconds=0.05,
        webhook_allowed_networks="127.0.0.0/8",
        webhook_rotation_overlap_seconds=OVERLAP_SECONDS,
        webhook_timeout_seconds=2,
        webhook_response_excerpt_bytes=64,
    )


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    server = Receiver()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def send_webhook(tenant: TenantClient, url: str, **fields: Any) -> str:
    body = {"url": url, "payload": {"event": "order.paid", "id": 42}, **fields}
    response = await tenant.post("/v1/notifications/webhook", json=body)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


async def create_secret(tenant: TenantClient) -> str:
    response = await tenant.post("/v1/webhook-secret")
    assert response.status_code == 201, response.text
    secret: str = response.json()["secret"]
    return secret


async def job(tenant: TenantClient, job_id: str) -> dict[str, Any]:
    response = await tenant.get(f"/v1/jobs/{job_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def deliver(services: Services) -> int:
    return await services.worker().run(once=True)
