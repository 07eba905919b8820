"""End-to-end fixtures: a real sandbox over loopback HTTP and SMTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient

SLACK_PATH = "/slack/T000/B000/e2e"


@pytest.fixture
async def sandbox() -> AsyncIterator[SandboxServer]:
    async with SandboxServer(port=0, smtp_port=0) as server:
        yield server


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=database_url,
        provider_allowed_networks="127.0.0.0/8,::1/128",
        data_dir=tmp_path / "data",
        secret_key=secret_key,
        retry_base_seconds=10,
        max_attempts=3,
        lease_seconds=30,
        provider_timeout_seconds=1,
        alert_batch_seconds=0,
        alert_slack_webhook_url=sandbox.base_url + SLACK_PATH,
        poll_interval_seconds=0.05,
    )


class Sandbox:
    """Test-side helper for the sandbox's control API."""

    def __init__(self, server: SandboxServer, http: httpx.AsyncClient) -> None:
        self.server = server
        self.http = http

    async def fault(self, provider: str, **rule: Any) -> None:
        response = await self.http.post("/_sandbox/faults", json={"provider": provider, **rule})
        response.raise_for_status()

    async def messages(self, provider: str | None = None) -> list[dict[str, Any]]:
        params = {"provider": provider} if provider else {}
        response = await self.http.get("/_sandbox/messages", params=params)
        response.raise_for_status()
        messages: list[dict[str, Any]] = response.json()
        return messages

    async def slack(self) -> list[dict[str, Any]]:
        response = await self.http.get("/_sandbox/slack")
        response.raise_for_status()
        received: list[dict[str, Any]] = response.json()
        return received


@pytest.fixture
async def sb(sandbox: SandboxServer) -> AsyncIterator[Sandbox]:
    async with httpx.AsyncClient(base_url=sandbox.base_url, timeout=10) as http:
        yield Sandbox(sandbox, http)


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


async def job(tenant: TenantClient, job_id: str) -> dict[str, Any]:
    response = await tenant.get(f"/v1/jobs/{job_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def deliver(services: Services) -> int:
    return await services.worker().run(once=True)
