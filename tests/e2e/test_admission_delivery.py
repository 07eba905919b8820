"""Admission meets delivery: test keys reach only a sandbox; suspension holds jobs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.clock import ManualClock
from homing.dispatch.worker import SUSPENDED_HOLD_SECONDS
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.admission_helpers import admission_settings
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, job, register, send


@pytest.fixture
async def real() -> AsyncIterator[SandboxServer]:
    """A second sandbox standing in for a real provider: not in HOMING_SANDBOX_URLS."""
    async with SandboxServer(port=0, smtp_port=0) as server:
        yield server


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    urls = f"{sandbox.base_url},smtp://127.0.0.1:{sandbox.smtp_port}"
    return admission_settings(database_url, tmp_path, secret_key, sandbox_urls=urls)


async def _received(server: SandboxServer) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        response = await http.get("/_sandbox/messages")
        messages: list[dict[str, Any]] = response.json()
        return messages


async def _test_key(tenant: TenantClient) -> TenantClient:
    issued = (await tenant.post("/v1/api-keys", json={"name": "ci", "test": True})).json()
    return TenantClient(tenant.api, tenant.tenant_id, issued["key"])


def _trail(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["provider"], a["outcome"]) for a in body["attempts"]]


async def test_a_test_keys_job_never_reaches_a_provider_outside_the_sandbox(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, real: SandboxServer
) -> None:
    await register(tenant, real, "resend", 1)
    await register(tenant, sandbox, "postmark", 2)
    test_client = await _test_key(tenant)
    job_id = await send(test_client)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert body["provider"] == "postmark"
    assert _trail(body) == [("resend", "provider_permanent"), ("postmark", "success")]
    assert "sandbox" in body["attempts"][0]["error"]
    assert await _received(real) == []
    [message] = await _received(sandbox)
    assert message["job_id"] == job_id
    live_id = await send(tenant)
    await deliver(services)
    assert (await job(tenant, live_id))["provider"] == "resend", "live keys use every provider"
    assert len(await _received(real)) == 1


async def test_a_test_job_with_no_sandbox_provider_fails_without_sending(
    services: Services,
    tenant: TenantClient,
    real: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, real, "sendgrid", 1)
    await register(
        tenant,
        real,
        "smtp",
        2,
        credentials={"host": "127.0.0.1", "port": real.smtp_port, "starttls": False},
    )
    job_id = await send(await _test_key(tenant))
    await deliver(services)
    clock.advance(86_400)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert _trail(body) == [("sendgrid", "provider_permanent"), ("smtp", "provider_permanent")]
    assert await _received(real) == []


async def test_a_test_job_may_use_a_sandbox_smtp_server(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    smtp = {"host": "127.0.0.1", "port": sandbox.smtp_port, "starttls": False}
    await register(tenant, sandbox, "smtp", 1, credentials=smtp)
    job_id = await send(await _test_key(tenant))
    await deliver(services)
    assert (await job(tenant, job_id))["status"] == "COMPLETED"


async def test_a_suspended_tenants_queued_jobs_stay_queued_until_it_is_unsuspended(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_ids = [await send(tenant) for _ in range(3)]
    await services.tenant_admin.suspend(tenant.tenant_id)
    assert await deliver(services) == 0
    clock.advance(SUSPENDED_HOLD_SECONDS + 1)
    assert await deliver(services) == 0
    assert await sb.messages() == []
    for job_id in job_ids:
        found, attempts = await services.jobs.get(tenant.tenant_id, job_id)
        assert (found.status.value, found.error_class, attempts) == (
            "PENDING",
            "tenant_suspended",
            [],
        )
    await services.tenant_admin.unsuspend(tenant.tenant_id)
    assert await deliver(services) == 3
    for job_id in job_ids:
        body = await job(tenant, job_id)
        assert body["status"] == "COMPLETED"
        assert [a["number"] for a in body["attempts"]] == [1], "holding spent no attempt"
    assert len(await sb.messages()) == 3
