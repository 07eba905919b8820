"""Every log line about a job says which job, tenant and attempt it is about."""

from __future__ import annotations

import json
from typing import Any

from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, register, send
from tests.fixtures import captured_logs


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


async def test_delivery_log_lines_carry_job_tenant_and_attempt(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(tenant)
    with captured_logs() as buffer:
        assert await deliver(services) == 1
    about = [line for line in _lines(buffer.getvalue()) if line.get("job_id") == job_id]
    assert about, buffer.getvalue()
    for line in about:
        assert line["tenant_id"] == tenant.tenant_id
        assert line["attempt"] == 1
    assert any(line["event"] == "pass finished" for line in about)


async def test_dead_letter_line_carries_tenant_and_last_attempt(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=400)  # permanent: dead-lettered on the first attempt
    job_id = await send(tenant)
    with captured_logs() as buffer:
        await deliver(services)
    [line] = [
        line
        for line in _lines(buffer.getvalue())
        if line["event"] == "job dead-lettered" and line.get("job_id") == job_id
    ]
    assert (line["tenant_id"], line["attempt"]) == (tenant.tenant_id, 1)


async def test_retried_job_logs_its_next_attempt(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=503)
    job_id = await send(tenant)
    with captured_logs() as buffer:
        await deliver(services)
        services.clock.advance(3600)  # type: ignore[attr-defined]
        await deliver(services)
    attempts = [
        line["attempt"]
        for line in _lines(buffer.getvalue())
        if line.get("job_id") == job_id and line["event"] == "pass finished"
    ]
    assert attempts[:2] == [1, 2], buffer.getvalue()
    assert all(
        line["tenant_id"] == tenant.tenant_id
        for line in _lines(buffer.getvalue())
        if line.get("job_id") == job_id
    )
