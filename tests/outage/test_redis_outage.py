"""Redis stopped and started: rate limiting follows its setting, delivery goes on.

The Redis here is the test's own (tests/outage/servers.py), killed and started again on
the same port. With ``HOMING_RATE_LIMIT_ON_REDIS_ERROR=open`` the API admits while it
is gone; with ``closed`` it refuses with 503 ``rate_limit_unavailable`` and
``Retry-After`` — never a 500 either way. Jobs already queued are delivered: the
provider's pacing rules live in Redis too, and while they cannot be checked a job waits
without spending an attempt (``closed``) or goes ahead (``open``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY

from homing.api.app import create_app
from homing.clock import ManualClock
from homing.models import Plan
from homing.sandbox.server import SandboxServer
from homing.services import Services, build
from tests.conftest import TenantClient, make_tenant
from tests.e2e.conftest import register, send
from tests.figures import record
from tests.fixtures import settings_for, sqlite_url
from tests.outage.servers import RedisServer
from tests.processes import eventually

PACED = [{"scope": "account", "limit": 1000, "per_seconds": 1}]


async def _outage_services(
    tmp_path: Path, secret_key: str, redis: RedisServer, policy: str
) -> Services:
    settings = settings_for(
        sqlite_url(tmp_path),
        tmp_path,
        secret_key,
        redis_url=redis.url,
        redis_key_prefix=f"outage-{policy}",
        redis_timeout_seconds=0.2,
        rate_limit_on_redis_error=policy,
    )
    return await build(settings, clock=ManualClock())


def _degraded_decisions(policy: str) -> float:
    value = REGISTRY.get_sample_value("homing_rate_limit_storage_errors_total", {"policy": policy})
    return value or 0.0


async def _statuses(tenant: TenantClient, ids: list[str]) -> list[str]:
    return [(await tenant.get(f"/v1/jobs/{i}")).json()["status"] for i in ids]


async def _admitted(tenant: TenantClient) -> Any:
    response = await tenant.post(
        "/v1/notifications/email",
        json={"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"},
    )
    return response if response.status_code == 202 else None


@pytest.mark.parametrize("policy", ["open", "closed"])
async def test_redis_outage_follows_the_policy_and_delivery_goes_on(
    tmp_path: Path,
    secret_key: str,
    own_redis: RedisServer,
    sandbox: SandboxServer,
    policy: str,
) -> None:
    services = await _outage_services(tmp_path, secret_key, own_redis, policy)
    transport = httpx.ASGITransport(app=create_app(services))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as api:
            tenant = await make_tenant(services, api, "redis", Plan.STARTUP)
            provider = await register(tenant, sandbox, "resend", 1)
            patch = await tenant.patch(
                f"/v1/providers/{provider['id']}", json={"rate_rules": PACED}
            )
            assert patch.status_code == 200, patch.text
            before = await send(tenant, subject="before")
            queued = await send(tenant, subject="queued")
            assert await services.worker().run(once=True) == 2
            third = await send(tenant, subject="waiting through the outage")
            errors_before = _degraded_decisions(policy)

            own_redis.stop()
            during = await tenant.post(
                "/v1/notifications/email",
                json={"to": "b@example.com", "from": "a@acme.example", "subject": "s", "text": "t"},
            )
            if policy == "open":
                assert during.status_code == 202, during.text
            else:
                assert during.status_code == 503, during.text
                assert during.json()["error"]["code"] == "rate_limit_unavailable"
                assert during.headers["Retry-After"].isdigit()
            usage = await tenant.get("/v1/usage")
            assert usage.status_code == 200, usage.text
            await services.worker().run(once=True)
            waiting = await _statuses(tenant, [third])
            assert _degraded_decisions(policy) > errors_before

            own_redis.start()
            await eventually(lambda: _admitted(tenant), timeout=20, what="Redis to be used again")
            assert isinstance(services.clock, ManualClock)
            services.clock.advance(5)  # past any pacing wait taken during the outage
            await services.worker().run(once=True)
            ids = [before, queued, third] + ([during.json()["id"]] if policy == "open" else [])
            final = await _statuses(tenant, ids)
            messages = [m.subject for m in sandbox.state.messages()]
    finally:
        await services.aclose()
    record(
        "outage-redis",
        policy=policy,
        answer_during_outage=during.status_code,
        queued_job_during_outage=waiting[0],
        final=sorted(set(final)),
    )
    if policy == "open":
        assert waiting == ["COMPLETED"], "open: pacing lets the queued job through"
    else:
        assert waiting == ["PENDING"], "closed: the queued job waits, no attempt spent"
    assert set(final) == {"COMPLETED"}
    assert "waiting through the outage" in messages
