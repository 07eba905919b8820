"""A hostile tenant makes Homing tell it things, over and over: fifty of its webhook URLs
answer 410 at once. Its notices are bounded (``HOMING_NOTICE_MAX_PER_HOUR``; the rest
are held and counted in its digest), and another tenant's notice, raised meanwhile, is
delivered in the same worker run, webhook and email: Homing's mail on the platform-email
queue is never stuck behind one tenant's storm. Also: a notice event recorded by many
callers at once is one notice, and a tenant cannot re-check another's provider."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from homing.clock import ManualClock
from homing.managers.notice_checks import NoticeChecks
from homing.managers.notices import NoticeKind
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, deliver, make_tenant
from tests.e2e.conftest import register
from tests.fixtures import Sandbox, settings_for
from tests.notices.conftest import PLATFORM_FROM
from tests.notices.conftest import platform as platform  # the fixture, shared
from tests.store_helpers import notices_of
from tests.webhooks.conftest import send_webhook
from tests.webhooks.receiver import Receiver, Reply

MAX_PER_HOUR = 5
STORM = 50


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        webhook_allowed_networks="127.0.0.0/8",
        webhook_timeout_seconds=2,
        platform_email_from=PLATFORM_FROM,
        notice_max_per_hour=MAX_PER_HOUR,
    )


async def _targets(tenant: TenantClient, receiver: Receiver, name: str) -> None:
    body = {"contact_email": f"ops@{name}.example", "operations_url": f"{receiver.url}/{name}"}
    response = await tenant.patch("/v1/settings", json=body)
    assert response.status_code == 200, response.text


async def test_a_notice_storm_is_bounded_and_spares_another_tenants_notices(
    services: Services,
    api: httpx.AsyncClient,
    platform: TenantClient,
    receiver: Receiver,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    mallory = await make_tenant(services, api, "mallory")
    alice = await make_tenant(services, api, "alice")
    await _targets(mallory, receiver, "mallory")
    await _targets(alice, receiver, "alice")
    receiver.reply(*[Reply(status=410) for _ in range(STORM)])
    for i in range(STORM):
        await send_webhook(mallory, f"{receiver.url}/customer/{i}")
    await deliver(services)  # fifty 410s: fifty endpoint.disabled events

    await services.notices.notify(alice.tenant_id, NoticeKind.DOMAIN_VERIFIED, "d1", {})
    await deliver(services)
    paths = [r.path for r in receiver.requests]
    assert paths.count("/mallory") == MAX_PER_HOUR
    assert paths.count("/alice") == 1
    mails = await sb.messages("sendgrid")
    assert sum(m["to"] == ["ops@mallory.example"] for m in mails) == MAX_PER_HOUR
    assert sum(m["to"] == ["ops@alice.example"] for m in mails) == 1
    held = [n for n in await notices_of(services.db, mallory.tenant_id) if n.held]
    assert len(held) == STORM - MAX_PER_HOUR

    clock.advance(86_400)
    checks = NoticeChecks(services.notices, services.tenants, services.admission, clock)
    await checks.digest()
    await deliver(services)
    [digest] = [json.loads(r.body) for r in receiver.requests if r.path == "/mallory"][-1:]
    assert digest["type"] == "message.dead_lettered"
    assert digest["data"]["held_notices"] == STORM - MAX_PER_HOUR


async def test_one_event_recorded_by_many_callers_at_once_is_one_notice(
    services: Services, tenant: TenantClient
) -> None:
    calls = [
        services.notices.notify(tenant.tenant_id, NoticeKind.QUOTA_WARNING, "webhook:2026-05", {})
        for _ in range(20)
    ]
    recorded = [n for n in await asyncio.gather(*calls) if n is not None]
    assert len(recorded) == 1
    assert len(await notices_of(services.db, tenant.tenant_id)) == 1


async def test_a_tenant_cannot_recheck_another_tenants_provider(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    sandbox: SandboxServer,
) -> None:
    account = await register(tenant, sandbox, "resend", 1)
    other = await make_tenant(services, api, "other")
    response = await other.patch(f"/v1/providers/{account['id']}", json={"recheck": True})
    assert response.status_code == 404
