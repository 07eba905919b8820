"""A sending domain's check that finds it verified, or failed, tells the tenant once per
change, through the sandbox's domain API and the tenant's operations URL."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, deliver
from tests.e2e.conftest import register
from tests.webhooks.receiver import Receiver


async def _domain(tenant: TenantClient, sandbox: SandboxServer, name: str) -> dict[str, Any]:
    account = await register(tenant, sandbox, "resend", 1)
    created = await tenant.post(
        "/v1/domains", json={"domain": name, "provider_account_id": account["id"]}
    )
    assert created.status_code == 201, created.text
    domain: dict[str, Any] = created.json()
    return domain


async def _notices(services: Services, receiver: Receiver) -> list[dict[str, Any]]:
    await deliver(services)
    return [json.loads(r.body) for r in receiver.requests]


async def test_a_domain_found_verified_is_noticed_once(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, receiver: Receiver
) -> None:
    await tenant.patch("/v1/settings", json={"operations_url": receiver.url})
    domain = await _domain(tenant, sandbox, "acme.example")
    checks = [tenant.post(f"/v1/domains/{domain['id']}/verify") for _ in range(3)]
    answers = await asyncio.gather(*checks)
    assert all(a.json()["status"] == "verified" for a in answers)
    await tenant.post(f"/v1/domains/{domain['id']}/verify")
    [notice] = await _notices(services, receiver)
    assert notice["type"] == "domain.verified"
    assert notice["data"]["domain"] == "acme.example"
    assert notice["data"]["domain_id"] == domain["id"]


async def test_a_domain_found_failed_is_noticed_as_failed(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, receiver: Receiver
) -> None:
    await tenant.patch("/v1/settings", json={"operations_url": receiver.url})
    domain = await _domain(tenant, sandbox, "unverified.example")
    checked = await tenant.post(f"/v1/domains/{domain['id']}/verify")
    assert checked.json()["status"] == "failed", checked.text
    [notice] = await _notices(services, receiver)
    assert notice["type"] == "domain.failed"
