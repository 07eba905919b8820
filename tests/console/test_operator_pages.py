"""The operator's console pages: tenants with suspend and resume, and the queues (depth
by queue, priority and state, and each tenant's backlog)."""

from __future__ import annotations

import re

import httpx

from homing.clock import ManualClock
from homing.models import Role
from homing.services import Services
from tests.conftest import TenantClient, make_tenant, stored_provider
from tests.console_helpers import PASSWORD, add_user, browser, sign_in
from tests.e2e.conftest import send


async def test_an_operator_suspends_a_tenant_and_its_api_is_refused_until_resumed(
    services: Services, api: httpx.AsyncClient
) -> None:
    acme = await make_tenant(services, api, "Acme", provider=True)
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        csrf = await sign_in(client, "root@example.com")
        listed = await client.get("/operator/tenants")
        assert (
            "Acme" in listed.text and f"/operator/tenants/{acme.tenant_id}/suspend" in listed.text
        )
        done = await client.post(f"/operator/tenants/{acme.tenant_id}/suspend", data={"csrf": csrf})
        assert done.status_code == 303
        assert (await acme.get("/v1/usage")).status_code == 403
        shown = await client.get("/operator/tenants")
        assert "suspended" in shown.text
        await client.post(f"/operator/tenants/{acme.tenant_id}/resume", data={"csrf": csrf})
    assert (await acme.get("/v1/usage")).status_code == 200


async def test_the_queues_page_shows_what_waits(services: Services, tenant: TenantClient) -> None:
    await stored_provider(services, tenant.tenant_id)  # accepted; left waiting
    await send(tenant)
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        await sign_in(client, "root@example.com")
        page = await client.get("/operator/queues")
    assert page.status_code == 200
    assert "notifications-email" in page.text and tenant.tenant_id in page.text


async def test_operator_pages_do_not_exist_for_a_tenants_member(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        for path in ("/operator/tenants", "/operator/queues"):
            assert (await client.get(path)).status_code == 404
        refused = await client.post(
            f"/operator/tenants/{tenant.tenant_id}/suspend", data={"csrf": csrf}
        )
    assert refused.status_code == 404
    assert (await tenant.get("/v1/usage")).status_code == 200


async def test_signing_in_follows_a_local_next(services: Services) -> None:
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        answer = await client.post(
            "/sign-in",
            data={"email": "root@example.com", "password": PASSWORD, "next": "/operator/queues"},
        )
    assert answer.headers["location"] == "/operator/queues"


async def test_the_queues_page_shows_each_tenants_backlog_by_queue_and_priority(
    services: Services, api: httpx.AsyncClient, clock: ManualClock
) -> None:
    acme = await make_tenant(services, api, "Acme", provider=True)
    globex = await make_tenant(services, api, "Globex", provider=True)
    for tenant in (acme, acme, globex):
        await send(tenant)
    clock.advance(90)
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        await sign_in(client, "root@example.com")
        page = await client.get("/operator/queues")
    rows = [
        " ".join(re.sub(r"<[^>]+>", " ", row).split())
        for row in re.findall(r'<tr class="tenant-depth">(.*?)</tr>', page.text, re.S)
    ]
    assert len(rows) == 2
    assert rows[0].startswith(f"Acme {acme.tenant_id} notifications-email")
    assert rows[0].endswith("2 90.0 s") and rows[1].startswith(f"Globex {globex.tenant_id}")
