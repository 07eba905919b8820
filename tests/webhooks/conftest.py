"""Webhook fixtures: settings that open loopback (the real local ``receiver`` is in
``tests/conftest.py``), helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from homing.settings import Settings
from tests.conftest import TenantClient, deliver, job
from tests.fixtures import settings_for

# deliver and job live in tests/conftest.py; tests import them from here too.
__all__ = ["create_secret", "deliver", "job", "send_webhook"]

OVERLAP_SECONDS = 60


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        SecretStr(secret_key),
        webhook_allowed_networks="127.0.0.0/8",
        webhook_rotation_overlap_seconds=OVERLAP_SECONDS,
        webhook_timeout_seconds=2,
        webhook_response_excerpt_bytes=64,
    )


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
