"""End-to-end fixtures: a real sandbox over loopback HTTP and SMTP (the ``sandbox`` and
``sb`` fixtures of ``tests/conftest.py``), alerts to its Slack, and API helpers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from homing.api.app import create_app
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, deliver, job
from tests.fixtures import Sandbox, serving, settings_for

# Sandbox, deliver and job live in tests/fixtures.py and tests/conftest.py; tests import
# them from here too.
__all__ = ["Sandbox", "deliver", "job", "register", "send"]

SLACK_PATH = "/slack/T000/B000/e2e"


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        provider_timeout_seconds=1,
        alert_slack_webhook_url=sandbox.base_url + SLACK_PATH,
    )


@pytest.fixture
async def homing_url(services: Services) -> AsyncIterator[str]:
    """Homing's API on a loopback port, so the sandbox can post events to it."""
    async with serving(create_app(services), log_level="warning") as url:
        yield url


async def register(
    tenant: TenantClient,
    sandbox: SandboxServer,
    provider: str,
    priority: int,
    credentials: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Register one of the sandbox's providers for the tenant through the API."""
    if credentials is None:
        credentials = {"api_key": f"{provider}-key-{tenant.tenant_id[-6:]}"}
        if provider == "mailgun":
            credentials["domain"] = "mg.example.com"
    config = {} if provider == "smtp" else {"base_url": sandbox.provider_base_url(provider)}
    response = await tenant.post(
        "/v1/providers",
        json={
            "channel": "email",
            "provider": provider,
            "credentials": credentials,
            "config": config,
            "priority": priority,
        },
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def send(tenant: TenantClient, **overrides: Any) -> str:
    body = {
        "to": "ada@example.com",
        "from": "Acme <hello@acme.example>",
        "subject": "Welcome",
        "text": "Hello Ada",
        **overrides,
    }
    headers = overrides.pop("headers", None) or {}
    body.pop("headers", None)
    response = await tenant.post("/v1/notifications/email", json=body, headers=headers)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id
