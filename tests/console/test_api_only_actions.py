"""The changes that were the API's alone, now console forms (issue #28, item 6): an
account's inbound secret set and removed, a gone webhook endpoint delivered to again, a
sending domain removed, dead letters purged and a tenant's plan changed. Each calls
the manager its API route calls, is audited as that route is (by the signed-in user),
asks first when it destroys, and keeps what was typed beside the reason it refused."""

from __future__ import annotations

import httpx

from homing.channels import Channel
from homing.domain.audit import AuditEvent, AuditFilter
from homing.models import AuditAction, Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, make_tenant, stored_provider
from tests.console_helpers import add_user, browser, sign_in
from tests.dead_letter_helpers import dead_letter
from tests.e2e.conftest import register

OWNER = "ada@example.com"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


async def _events(services: Services, tenant_id: str, action: AuditAction) -> list[AuditEvent]:
    f = AuditFilter(tenant_id=tenant_id, action=action)
    return (await services.audit.page(f, limit=20, cursor=None))[0]


async def test_an_owner_sets_and_then_removes_an_inbound_secret(
    services: Services, tenant: TenantClient
) -> None:
    account = await stored_provider(services, tenant.tenant_id)
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    page = f"/t/{tenant.tenant_id}/providers/{account.id}/inbound"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        listed = await client.get(f"/t/{tenant.tenant_id}/providers")
        before = await client.get(page)
        done = await client.post(page, data={"csrf": csrf, "signing_secret": SECRET})
        shown = await client.get(page)
        asked = await client.get(f"{page}/remove")
        removed = await client.post(f"{page}/remove", data={"csrf": csrf})
        after = await client.get(page)
    assert f'href="{page}"' in listed.text
    assert 'data-warning="no-inbound-secret"' in before.text
    assert f"/inbound/resend/{account.id}" in before.text
    assert done.status_code == 303
    assert done.headers["location"] == f"/t/{tenant.tenant_id}/providers#p-{account.id}"
    assert "Inbound secret of resend set" in shown.text and "Current secret" in shown.text
    assert SECRET not in shown.text and SECRET not in asked.text
    assert asked.status_code == 200 and "answered 404" in asked.text
    assert removed.status_code == 303 and "Inbound secret of resend removed" in after.text
    assert 'data-warning="no-inbound-secret"' in after.text
    [rotated] = await _events(services, tenant.tenant_id, AuditAction.INBOUND_SECRET_ROTATED)
    [deleted] = await _events(services, tenant.tenant_id, AuditAction.INBOUND_SECRET_DELETED)
    for event in (rotated, deleted):
        assert event.actor.name == OWNER and event.target_id == account.id
    assert rotated.changes == {"inbound_secret": "changed"}


async def test_a_refused_inbound_secret_is_said_beside_the_field_and_not_sent_back(
    services: Services, tenant: TenantClient
) -> None:
    postmark = await stored_provider(services, tenant.tenant_id, provider="postmark")
    resend = await stored_provider(services, tenant.tenant_id)
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/providers"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        wrong = await client.post(
            f"{base}/{resend.id}/inbound", data={"csrf": csrf, "signing_secret": "not-svix"}
        )
        colon = await client.post(
            f"{base}/{postmark.id}/inbound",
            data={"csrf": csrf, "username": "hook:user", "password": "pa55-w0rd-typed"},
        )
    assert wrong.status_code == 422 and 'id="secret-error" role="alert"' in wrong.text
    assert 'aria-invalid="true"' in wrong.text and "not-svix" not in wrong.text
    assert colon.status_code == 422 and "cannot contain" in colon.text
    assert 'value="hook:user"' in colon.text and "pa55-w0rd-typed" not in colon.text
    assert await _events(services, tenant.tenant_id, AuditAction.INBOUND_SECRET_ROTATED) == []


async def test_an_owner_delivers_to_a_gone_endpoint_again(
    services: Services, tenant: TenantClient
) -> None:
    url = "https://hooks.example.com/in?token=t0ken-of-the-receiver"
    hook = {"url": url, "payload": {"order": 42}}
    sent = await tenant.post("/v1/notifications/webhook", json=hook)
    assert sent.status_code == 202, sent.text
    stored = services.webhooks.normalise_url(url)
    await services.webhooks.store.mark_gone(tenant.tenant_id, stored, sent.json()["id"])
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    page = f"/t/{tenant.tenant_id}/webhooks"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        before = await client.get(page)
        done = await client.post(
            f"{page}/endpoints/enable", data={"csrf": csrf, "url": url}, follow_redirects=True
        )
        twice = await client.post(f"{page}/endpoints/enable", data={"csrf": csrf, "url": url})
    assert "Deliver again" in before.text
    assert done.status_code == 200 and "Deliveries to hooks.example.com resume" in done.text
    assert "No endpoint answered 410 Gone" in done.text
    assert twice.status_code == 404
    assert await services.webhooks.store.gone(tenant.tenant_id) == []
    [event] = await _events(services, tenant.tenant_id, AuditAction.WEBHOOK_ENDPOINT_ENABLED)
    assert event.actor.name == OWNER and event.target_id == "https://hooks.example.com/in"


async def test_an_owner_removes_a_sending_domain_after_being_asked(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    added = await tenant.post(
        "/v1/domains", json={"domain": "mail.acme.example", "provider_account_id": resend["id"]}
    )
    assert added.status_code == 201, added.text
    domain_id = added.json()["id"]
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/domains"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        listed = await client.get(base)
        asked = await client.get(f"{base}/{domain_id}/remove")
        done = await client.post(
            f"{base}/{domain_id}/remove", data={"csrf": csrf}, follow_redirects=True
        )
    assert f'href="{base}/{domain_id}/remove"' in listed.text
    assert asked.status_code == 200 and 'data-warning="last-domain"' in asked.text
    assert "cannot be undone" in asked.text
    assert done.status_code == 200 and "Domain mail.acme.example removed" in done.text
    assert (await tenant.get(f"/v1/domains/{domain_id}")).status_code == 404
    [event] = await _events(services, tenant.tenant_id, AuditAction.DOMAIN_REMOVED)
    assert event.actor.name == OWNER and event.target_id == domain_id


async def test_an_owner_purges_the_dead_letters_of_one_provider_after_a_count(
    services: Services, tenant: TenantClient
) -> None:
    await dead_letter(services, tenant, provider="resend")
    await dead_letter(services, tenant, provider="resend")
    kept = await dead_letter(services, tenant, provider="postmark")
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/dead-letters"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        asked = await client.get(f"{base}/purge", params={"provider": "resend"})
        done = await client.post(
            f"{base}/purge", data={"csrf": csrf, "provider": "resend"}, follow_redirects=True
        )
    assert asked.status_code == 200 and 'data-matched="2"' in asked.text
    assert "Purge 2 dead letters" in asked.text and 'value="resend"' in asked.text
    assert done.status_code == 200 and "2 dead letters purged" in done.text
    left = (await tenant.get("/v1/dead-letters")).json()["data"]
    assert [d["id"] for d in left] == [kept]
    [event] = await _events(services, tenant.tenant_id, AuditAction.DEAD_LETTERS_PURGED)
    assert event.actor.name == OWNER
    assert event.changes == {"filter": {"provider": "resend"}, "ids": None, "purged": 2}


async def test_an_operator_changes_a_tenants_plan(
    services: Services, api: httpx.AsyncClient
) -> None:
    acme = await make_tenant(services, api, "Acme")
    await add_user(services, "root@example.com", operator=True)
    action = f"/operator/tenants/{acme.tenant_id}/plan"
    async with browser(services) as client:
        csrf = await sign_in(client, "root@example.com")
        listed = await client.get("/operator/tenants")
        done = await client.post(
            action, data={"csrf": csrf, "plan": "INDIE"}, follow_redirects=True
        )
        wrong = await client.post(action, data={"csrf": csrf, "plan": "PLATINUM"})
    assert f'action="{action}"' in listed.text
    assert done.status_code == 200 and "Tenant Acme is on INDIE now" in done.text
    assert (await services.tenant_admin.get(acme.tenant_id)).plan.value == "INDIE"
    assert wrong.status_code == 422 and "Choose one of the plans" in wrong.text
    assert 'aria-invalid="true"' in wrong.text
    [event] = await _events(services, acme.tenant_id, AuditAction.TENANT_PLAN_CHANGED)
    assert event.actor.name == "root@example.com"
    assert event.changes == {"plan": {"from": "STARTUP", "to": "INDIE"}}


async def test_a_viewer_sees_none_of_the_forms_and_is_refused_each_change(
    services: Services, tenant: TenantClient
) -> None:
    account = await stored_provider(services, tenant.tenant_id, Channel.EMAIL)
    letter = await dead_letter(services, tenant)
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    t = f"/t/{tenant.tenant_id}"
    async with browser(services) as client:
        csrf = await sign_in(client, "vic@example.com")
        providers = await client.get(f"{t}/providers")
        pages = [
            await client.get(f"{t}/providers/{account.id}/inbound"),
            await client.get(f"{t}/dead-letters/purge"),
        ]
        posts = [
            await client.post(path, data={"csrf": csrf, "signing_secret": SECRET, "url": "x"})
            for path in (
                f"{t}/providers/{account.id}/inbound",
                f"{t}/providers/{account.id}/inbound/remove",
                f"{t}/dead-letters/purge",
                f"{t}/webhooks/endpoints/enable",
            )
        ]
    assert f"{t}/providers/{account.id}/inbound" not in providers.text
    assert [p.status_code for p in pages] == [403, 403]
    assert [p.status_code for p in posts] == [403, 403, 403, 403]
    assert [d["id"] for d in (await tenant.get("/v1/dead-letters")).json()["data"]] == [letter]
