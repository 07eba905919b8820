"""A hostile person and the console's flashes: markup in what a flash repeats, a
flood of changes to grow one session's flashes, refused changes (viewer, missing
CSRF, another tenant's id) that must flash nothing, on every page that flashes, and
the sign-in page's ``done`` and a page's old ``?saved=``/``?removed=``/``?would=``
that must never make a page claim what the address says."""

from __future__ import annotations

import httpx
from sqlalchemy import func, select

from homing.managers.flashes import KEEP
from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.store.tables.console import console_flashes
from tests.conftest import TenantClient, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.conftest import register


async def _stored(services: Services) -> int:
    async with services.db.transaction() as conn:
        return int((await conn.execute(select(func.count()).select_from(console_flashes))).one()[0])


async def test_markup_in_a_flashed_name_is_text_and_a_flood_keeps_only_the_newest(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        name = "<script>alert(1)</script>" + "x" * 175
        await client.post(f"{base}/api-keys", data={"csrf": csrf, "name": name})
        shown = await client.get(f"{base}/api-keys")
        for _ in range(3 * KEEP):
            await client.post(f"{base}/dead-letters/redrive", data={"csrf": csrf, "dry_run": "1"})
        assert await _stored(services) == KEEP
        flooded = await client.get(f"{base}/dead-letters")
    assert "<script>alert(1)" not in shown.text and "&lt;script&gt;alert(1)" in shown.text
    assert flooded.text.count("would be redriven") == KEEP
    assert await _stored(services) == 0


async def test_a_refused_change_flashes_nothing(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "globex")
    their_key = (await services.keys.live(other.tenant_id))[0].id
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    mine = f"/t/{tenant.tenant_id}"
    async with browser(services) as ada, browser(services) as vic:
        csrf = await sign_in(ada, "ada@example.com")
        viewer_csrf = await sign_in(vic, "vic@example.com")
        answers = [
            await ada.post(
                f"/t/{other.tenant_id}/api-keys/{their_key}/revoke", data={"csrf": csrf}
            ),
            await ada.post(f"{mine}/api-keys/{their_key}/revoke", data={"csrf": csrf}),
            await ada.post(f"{mine}/api-keys", data={"name": "no-csrf"}),
            await vic.post(f"{mine}/api-keys", data={"csrf": viewer_csrf, "name": "viewer"}),
            await vic.post(f"{mine}/webhooks/secret", data={"csrf": viewer_csrf}),
        ]
        after = await ada.get(f"{mine}/api-keys")
    assert [a.status_code for a in answers] == [404, 404, 403, 403, 403]
    assert await _stored(services) == 0
    assert 'role="status"' not in after.text
    assert len(await services.keys.live(other.tenant_id)) == 1


async def test_the_sign_in_pages_done_is_bounded_and_never_echoed(services: Services) -> None:
    async with browser(services) as client:
        unknown = await client.get("/sign-in", params={"done": "<b>pwned</b>"})
        too_long = await client.get("/sign-in", params={"done": "everywhere" * 3})
        known = await client.get("/sign-in", params={"done": "everywhere"})
    assert unknown.status_code == 200 and "pwned" not in unknown.text
    assert 'role="status"' not in unknown.text
    assert too_long.status_code == 422 and "everywhereeverywhere" not in too_long.text
    assert "Signed out everywhere" in known.text


async def test_an_address_cannot_make_a_page_claim_a_change(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    await add_user(services, "root@example.com", operator=True)
    base = f"/t/{tenant.tenant_id}"
    forged = {"saved": "1", "removed": "1", "would": "999", "redriven": "9", "refused": "9"}
    async with browser(services) as ada, browser(services) as root:
        await sign_in(ada, "ada@example.com")
        await sign_in(root, "root@example.com")
        pages = [
            await ada.get(f"{base}/providers/{resend['id']}/pacing", params=forged),
            await ada.get(f"{base}/suppressions", params=forged),
            await root.get("/operator/dead-letters", params=forged),
        ]
    assert [p.status_code for p in pages] == [200] * 3
    for page in pages:
        assert 'role="status"' not in page.text
        assert not any(s in page.text for s in ("Saved:", "Removed:", "would be redriven"))


async def test_a_refused_pacing_suppression_provider_or_user_change_flashes_nothing(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    other = await make_tenant(services, api, "globex")
    theirs = await register(other, sandbox, "resend", 1)
    stranger = await add_user(services, "eve@globex.example", other.tenant_id, Role.OWNER)
    mine = await register(tenant, sandbox, "resend", 1)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    vic = await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    base = f"/t/{tenant.tenant_id}"
    missing = "0190c0de-0000-7000-8000-000000000000"
    gone = {"channel": "email", "address": "nobody@example.com"}
    async with browser(services) as ada, browser(services) as viewer:
        csrf = await sign_in(ada, "ada@example.com")
        viewer_csrf = await sign_in(viewer, "vic@example.com")
        answers = [
            await ada.post(f"{base}/providers/{theirs['id']}/pacing", data={"csrf": csrf}),
            await ada.post(f"{base}/providers/{theirs['id']}/pacing/reset", data={"csrf": csrf}),
            await ada.post(f"{base}/providers/{theirs['id']}/remove", data={"csrf": csrf}),
            await ada.post(f"{base}/suppressions/remove", data={"csrf": csrf, **gone}),
            await ada.post(f"{base}/invitations/{missing}/revoke", data={"csrf": csrf}),
            await ada.post(
                f"{base}/users/{stranger.id}/role", data={"csrf": csrf, "role": "viewer"}
            ),
            await ada.post(f"{base}/users/{stranger.id}/remove", data={"csrf": csrf}),
            await ada.post(f"{base}/providers/{mine['id']}/pacing/reset", data={"csrf": ""}),
            await ada.post(f"{base}/users/{vic.id}/remove", data={"csrf": "forged"}),
            await viewer.post(f"{base}/suppressions", data={"csrf": viewer_csrf, **gone}),
            await viewer.post(f"{base}/providers/{mine['id']}/remove", data={"csrf": viewer_csrf}),
            await viewer.post(f"{base}/users/{vic.id}/remove", data={"csrf": viewer_csrf}),
        ]
    assert [a.status_code for a in answers] == [404] * 7 + [403] * 5
    assert await _stored(services) == 0
    assert await services.people.membership(vic, tenant.tenant_id) is not None
    assert len((await tenant.get("/v1/providers")).json()["data"]) == 1
