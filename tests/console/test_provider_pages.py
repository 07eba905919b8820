"""Providers and sending domains in the console: reorder (and the next send takes the
new first), enable and disable, the inbound URL, a domain's records and verify now."""

from __future__ import annotations

import re

from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, deliver, job
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.conftest import register, send


async def test_moving_a_provider_up_makes_the_next_send_take_it_first(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    postmark = await register(tenant, sandbox, "postmark", 2)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/providers"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        before = await client.get(base)
        assert before.text.index("resend") < before.text.index("postmark")
        assert f"/inbound/postmark/{postmark['id']}" in before.text
        moved = await client.post(
            f"{base}/{postmark['id']}/move", data={"csrf": csrf, "direction": "up"}
        )
        assert moved.status_code == 303
        after = await client.get(base)
    assert after.text.index("postmark") < after.text.index("resend")
    job_id = await send(tenant)
    assert await deliver(services) == 1
    assert (await job(tenant, job_id))["provider"] == "postmark"


async def test_a_disabled_provider_is_passed_over(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    await register(tenant, sandbox, "postmark", 2)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        off = await client.post(
            f"/t/{tenant.tenant_id}/providers/{resend['id']}/enabled",
            data={"csrf": csrf, "enabled": "0"},
        )
        assert off.status_code == 303
        bad = await client.post(
            f"/t/{tenant.tenant_id}/providers/{resend['id']}/move",
            data={"csrf": csrf, "direction": "sideways"},
        )
        assert bad.status_code == 422
    job_id = await send(tenant)
    await deliver(services)
    assert (await job(tenant, job_id))["provider"] == "postmark"


async def test_a_domain_is_added_with_its_records_to_copy_and_verified(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/domains"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        empty = await client.get(base)
        assert "No sending domain yet" in empty.text
        added = await client.post(
            base,
            data={"csrf": csrf, "domain": "mail.acme.example", "provider_account_id": resend["id"]},
            follow_redirects=True,
        )
        assert added.status_code == 200, added.text
        assert "mail.acme.example" in added.text
        assert len(re.findall(r'data-copy="v-', added.text)) >= 1
        domain_id = re.search(r'id="d-([0-9a-f-]{36})"', added.text)
        assert domain_id
        verified = await client.post(
            f"{base}/{domain_id.group(1)}/verify", data={"csrf": csrf}, follow_redirects=True
        )
        again = await client.post(
            base,
            data={"csrf": csrf, "domain": "mail.acme.example", "provider_account_id": resend["id"]},
        )
    assert verified.status_code == 200
    assert again.status_code == 409 and "already has this domain" in again.text
