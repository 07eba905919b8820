"""The operator's provider health and alerts pages: failures injected at the sandbox
show in a vendor's and an account's failure ratio; a failing provider shows as failing
before the evaluator runs, then as firing with since when; nothing firing says so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from homing.clock import ManualClock, as_datetime
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, deliver, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.conftest import register, send
from tests.fixtures import Sandbox, settings_for


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(database_url, tmp_path, secret_key, alert_provider_min_calls=4)


def _row(html: str, css: str, name: str) -> str:
    """The text of the first table row of class ``css`` that names ``name``."""
    for row in re.findall(rf'<tr class="{css}">(.*?)</tr>', html, re.S):
        if name in row:
            return re.sub(r"<[^>]+>", " ", row)
    raise AssertionError(f"no {css} row for {name}")


async def _failing_resend(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=503)
    for _ in range(4):
        await send(tenant)
    await deliver(services)


async def test_failures_injected_at_the_sandbox_show_in_the_failure_ratio(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await _failing_resend(services, tenant, sandbox, sb)
    globex = await make_tenant(services, tenant.api, "Globex")
    await register(globex, sandbox, "postmark", 1)
    await send(globex)
    await deliver(services)
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        await sign_in(client, "root@example.com")
        page = await client.get("/operator/providers")
        day = await client.get("/operator/providers", params={"window": "24h"})
    assert page.status_code == 200 and day.status_code == 200
    resend = _row(page.text, "vendor", "resend").split()
    assert resend[:4] == ["resend", "4", "0", "4"]  # calls, sent, transient
    assert "100 %" in " ".join(resend) and "failing" in resend
    postmark = " ".join(_row(page.text, "vendor", "postmark").split())
    assert postmark.startswith("postmark 1 1 0") and "0 %" in postmark
    account = " ".join(_row(page.text, "account", "Globex").split())
    assert globex.tenant_id in account and "postmark" in account
    failing_first = re.findall(r'<tr class="account"><td>(.*?)</td>', page.text, re.S)
    assert tenant.tenant_id in failing_first[0]
    [account_row] = await services.providers.all(tenant.tenant_id)
    assert "-key-" not in page.text and account_row.credentials_preview not in page.text
    assert _row(day.text, "vendor", "resend").split()[1] == "4"
    since = as_datetime(services.clock.now() - 900)
    first, more = await services.provider_health.by_account(since, limit=1, offset=0)
    second, last = await services.provider_health.by_account(since, limit=1, offset=1)
    assert [(h.tenant_id, h.failed, h.calls) for h in first] == [(tenant.tenant_id, 4, 4)]
    assert more and not last and [h.tenant_name for h in second] == ["Globex"]


async def test_a_failing_provider_shows_on_the_alerts_page_then_fires(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        await sign_in(client, "root@example.com")
        quiet = await client.get("/operator/alerts")
        await _failing_resend(services, tenant, sandbox, sb)
        before = await client.get("/operator/alerts")
        clock.advance(services.settings.alerts.interval_seconds)
        assert await services.check_rounds().run()
        after = await client.get("/operator/alerts")
    assert quiet.status_code == 200 and "Nothing is firing" in quiet.text
    assert "Failing, not yet fired" in before.text and "provider_failing:resend" in before.text
    assert "Nothing is firing" in before.text
    firing = " ".join(_row(after.text, "firing", "provider_failing:resend").split())
    assert "4 of 4 calls failed" in firing and "UTC" in firing
    assert "Nothing is firing" not in after.text
    assert "Recent alerts" in after.text
