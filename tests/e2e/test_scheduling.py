"""Pacing, ordering keys and plan priorities through the API and the sandbox."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from homing.channels import Channel
from homing.clock import ManualClock
from homing.domain.accepting import NewJob
from homing.models import Plan, Priority, Queue
from homing.sandbox.server import SandboxServer
from homing.services import Services, build_limiter
from homing.settings import Settings
from tests.conftest import REDIS_URL, TenantClient, make_tenant
from tests.e2e.conftest import Sandbox, deliver, job, register, send
from tests.processes import eventually
from tests.store_helpers import claim


async def _provider_with_rules(
    tenant: TenantClient, sandbox: SandboxServer, rules: list[dict[str, Any]]
) -> dict[str, Any]:
    account = await register(tenant, sandbox, "resend", 1)
    response = await tenant.patch(f"/v1/providers/{account['id']}", json={"rate_rules": rules})
    assert response.status_code == 200, response.text
    assert response.json()["config"]["rate_rules"] == rules
    return account


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def paced_services(
    request: pytest.FixtureRequest, services: Services, settings: Settings
) -> AsyncIterator[Services]:
    """The services, with pacing windows in memory or in the real Redis."""
    if request.param == "memory":
        yield services
        return
    prefix = f"homing-test-{uuid.uuid4().hex}"
    shared = settings.changed(redis_url=REDIS_URL, redis_key_prefix=prefix)
    limiter = build_limiter(shared)
    assert limiter.shared
    original = services.limiter
    services.limiter = limiter
    try:
        yield services
    finally:
        services.limiter = original
        await limiter.aclose()


async def test_an_account_rule_paces_sends_without_spending_attempts(
    paced_services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    services = paced_services
    await _provider_with_rules(
        tenant, sandbox, [{"scope": "account", "limit": 2, "per_seconds": 1}]
    )
    ids = [await send(tenant, to=f"user{i}@example.com") for i in range(3)]
    await deliver(services)
    assert len(await sb.messages("resend")) == 2
    paced = [await job(tenant, i) for i in ids if (await job(tenant, i))["status"] == "PENDING"]
    [waiting] = paced
    assert waiting["attempts"][-1]["outcome"] == "throttled"
    assert "paced: account rule 2 per 1s" in waiting["attempts"][-1]["error"]

    async def delivered() -> bool:
        clock.advance(1.5)
        await deliver(services)
        return (await job(tenant, waiting["id"]))["status"] == "COMPLETED"

    await eventually(delivered, timeout=10, what="the paced job once the window frees")
    body = await job(tenant, waiting["id"])
    assert {a["number"] for a in body["attempts"]} == {1}, "deferral spent no attempt"


async def test_a_recipient_rule_paces_one_address_not_the_others(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await _provider_with_rules(
        tenant, sandbox, [{"scope": "recipient", "limit": 1, "per_seconds": 60}]
    )
    await send(tenant, to="ada@example.com")
    await send(tenant, to="ADA@example.com")
    await send(tenant, to="bob@example.com")
    await deliver(services)
    assert sorted(m["to"][0] for m in await sb.messages("resend")) == [
        "ada@example.com",
        "bob@example.com",
    ]


async def test_rate_rules_are_validated(tenant: TenantClient, sandbox: SandboxServer) -> None:
    response = await tenant.post(
        "/v1/providers",
        json={
            "channel": "email",
            "provider": "resend",
            "credentials": {"api_key": "re_123456789"},
            "config": {
                "base_url": sandbox.provider_base_url("resend"),
                "rate_rules": [{"scope": "planet", "limit": 0, "per_seconds": 1}],
            },
        },
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"


async def test_an_ordering_key_delivers_in_acceptance_order_through_a_retry(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=503, count=1)
    ids = [await send(tenant, subject=f"step {i}", ordering_key="order-42") for i in range(4)]
    await deliver(services)
    assert await sb.messages("resend") == [], "only the head was claimable, and it failed"
    loose = await send(tenant, subject="unordered")
    await deliver(services)
    assert [m["subject"] for m in await sb.messages("resend")] == ["unordered"]
    for _ in range(6):
        clock.advance(3600)
        await deliver(services)
    subjects = [m["subject"] for m in await sb.messages("resend") if m["subject"] != "unordered"]
    assert subjects == [f"step {i}" for i in range(4)]
    statuses = [(await job(tenant, i))["status"] for i in [*ids, loose]]
    assert statuses == ["COMPLETED"] * 5


async def test_free_plan_traffic_is_always_low_priority(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    free = await make_tenant(services, tenant.api, "free", Plan.FREE)
    await register(free, sandbox, "resend", 1)
    await register(tenant, sandbox, "resend", 1)
    free_job = await send(free, priority="CRITICAL")
    paid_job = await send(tenant, priority="CRITICAL")
    assert (await job(free, free_job))["priority"] == "LOW"
    assert (await job(tenant, paid_job))["priority"] == "CRITICAL"
    claimed = await claim(services.queue, Queue.EMAIL, 1, 30)
    assert [c.job.id for c in claimed] == [paid_job]


async def test_platform_email_is_critical_and_retries_sooner(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    payload = {"to": "ops@example.com", "from": "homing@example.com", "subject": "s", "text": "t"}
    platform = await services.jobs.accept(
        NewJob(
            tenant_id=tenant.tenant_id,
            channel=Channel.EMAIL,
            queue=Queue.PLATFORM_EMAIL,
            priority=Priority.LOW,
            payload=payload,
        )
    )
    assert platform.job.priority is Priority.CRITICAL
    ordinary = await send(tenant)
    await sb.fault("resend", status=503, count=2)
    await deliver(services)
    clock.advance(services.settings.retries.platform_base_seconds + 0.01)
    await deliver(services)
    assert (await job(tenant, platform.job.id))["status"] == "COMPLETED"
    assert (await job(tenant, ordinary))["status"] == "PENDING"
