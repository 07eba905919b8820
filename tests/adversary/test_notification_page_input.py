"""A hostile member at the console's notification pages: oversized and malformed query
parameters (a status, a cursor) refused before any read; another tenant's notification
id as a cursor or a page pages nothing of theirs; markup in a notification's data and
a recipient id reaches every page escaped."""

from __future__ import annotations

import httpx

from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, deliver, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.test_notifications import notify, ready
from tests.e2e.test_recipients import put_recipient

SCRIPT = "<script>alert(1)</script>"


async def test_the_list_refuses_oversized_and_malformed_parameters(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await ready(tenant, sandbox, email="ada@example.com")
    mine = await notify(tenant, channels=["email"], strategy="all")
    globex = await make_tenant(services, api, "Globex")
    await ready(globex, sandbox, email="bo@example.com")
    theirs = await notify(globex, channels=["email"], strategy="all")
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    t = f"/t/{tenant.tenant_id}/notifications"
    async with browser(services) as client:
        await sign_in(client, "vic@example.com")
        refused = [
            await client.get(t, params=params)
            for params in (
                {"status": "s" * 21},
                {"status": "lost"},
                {"status": SCRIPT[:20]},
                {"cursor": "a" * 37},
                {"cursor": "' OR 1=1 --"},
                {"cursor": SCRIPT},
                {"cursor": "0" * 10_000},
            )
        ]
        # Another tenant's id, well formed, as a cursor: only this tenant's older ones.
        after_theirs = await client.get(t, params={"cursor": theirs["id"]})
        page = await client.get(f"{t}/{theirs['id']}")
    assert [r.status_code for r in refused] == [422] * len(refused)
    for answer in refused:
        assert "<script>alert" not in answer.text and "OR 1=1" not in answer.text
    assert after_theirs.status_code == 200
    assert mine["id"] in after_theirs.text and theirs["id"] not in after_theirs.text
    assert page.status_code == 404 and theirs["id"] not in page.text


async def test_markup_in_data_and_a_recipient_id_is_escaped_on_every_page(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await ready(tenant, sandbox, email="ada@example.com")
    # A recipient id cannot hold markup at all; the most its characters allow is shown.
    refused = await tenant.put(
        "/v1/recipients/<img src=x onerror=alert(1)>", json={"email": "x@example.com"}
    )
    assert refused.status_code == 422, refused.text
    odd = "a.b:c@d+e=f|g~h-i"
    await put_recipient(tenant, odd, email="odd@example.com")
    body = await notify(
        tenant, recipient=odd, channels=["email"], strategy="all", data={"n": SCRIPT}
    )
    assert await deliver(services) == 1
    await services.notifications.sweep()
    job_id = body["steps"][0]["job_id"]
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    t = f"/t/{tenant.tenant_id}"
    async with browser(services) as client:
        await sign_in(client, "vic@example.com")
        pages = [
            await client.get(path)
            for path in (
                f"{t}/notifications",
                f"{t}/notifications/{body['id']}",
                f"{t}/messages/{job_id}",
            )
        ]
    assert [p.status_code for p in pages] == [200, 200, 200]
    for page in pages:
        assert SCRIPT not in page.text
    # The notification pages show the recipient's id (the message page its address).
    assert odd in pages[0].text and odd in pages[1].text
    assert "Report &lt;script&gt;alert(1)&lt;/script&gt;" in pages[2].text
