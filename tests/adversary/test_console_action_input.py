"""A hostile owner or operator at the console forms that were the API's alone (issue
#28, item 6): another tenant's provider, domain or gone URL (404, exactly as the API
answers, nothing changed), over-long secrets, URLs and filters (refused, not cut, and
never echoed), a plan that is no plan, markup typed into a field, and each form without
its CSRF token."""

from __future__ import annotations

import httpx

from homing.models import Role
from homing.services import Services
from tests.conftest import TenantClient, make_tenant, stored_provider
from tests.console_helpers import add_user, browser, sign_in
from tests.dead_letter_helpers import dead_letter

OWNER = "mallory@example.com"


async def test_another_tenants_objects_are_404_and_stay_as_they_were(
    services: Services, api: httpx.AsyncClient
) -> None:
    mine = await make_tenant(services, api, "Mine")
    theirs = await make_tenant(services, api, "Theirs")
    account = await stored_provider(services, theirs.tenant_id)
    url = "https://hooks.theirs.example/in"
    sent = await theirs.post("/v1/notifications/webhook", json={"url": url, "payload": {}})
    await services.webhooks.store.mark_gone(theirs.tenant_id, url, sent.json()["id"])
    await add_user(services, OWNER, mine.tenant_id, Role.OWNER)
    t = f"/t/{mine.tenant_id}"
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        answers = [
            await client.get(f"{t}/providers/{account.id}/inbound"),
            await client.get(f"{t}/providers/{account.id}/inbound/remove"),
            await client.post(
                f"{t}/providers/{account.id}/inbound", data={"csrf": csrf, "signing_secret": secret}
            ),
            await client.post(f"{t}/providers/{account.id}/inbound/remove", data={"csrf": csrf}),
            await client.post(f"{t}/webhooks/endpoints/enable", data={"csrf": csrf, "url": url}),
        ]
    assert [a.status_code for a in answers] == [404] * 5
    assert secret not in answers[2].text
    with_secret = await theirs.get(f"/v1/providers/{account.id}/inbound")
    assert with_secret.status_code == 404
    assert [g.url for g in await services.webhooks.store.gone(theirs.tenant_id)] == [url]


async def test_over_long_fields_are_refused_not_cut_and_not_echoed(
    services: Services, tenant: TenantClient
) -> None:
    account = await stored_provider(services, tenant.tenant_id)
    await dead_letter(services, tenant, provider="resend")
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    t = f"/t/{tenant.tenant_id}"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        secret = await client.post(
            f"{t}/providers/{account.id}/inbound",
            data={"csrf": csrf, "signing_secret": "whsec_" + "A" * 4100},
        )
        url = await client.post(
            f"{t}/webhooks/endpoints/enable",
            data={"csrf": csrf, "url": "https://x.example/" + "p" * 2100},
        )
        purge = await client.post(
            f"{t}/dead-letters/purge", data={"csrf": csrf, "provider": "r" * 41}
        )
        count = await client.get(f"{t}/dead-letters/purge", params={"provider": "r" * 41})
        body = await client.post(
            f"{t}/providers/{account.id}/inbound",
            data={"csrf": csrf, "signing_secret": "A" * 17_000},
        )
    assert secret.status_code == 422 and "at most 4096 characters" in secret.text
    assert "A" * 100 not in secret.text
    assert url.status_code == 422 and "p" * 100 not in url.text
    assert purge.status_code == 422 and 'id="provider-error" role="alert"' in purge.text
    assert count.status_code == 422 and body.status_code == 413
    assert len((await tenant.get("/v1/dead-letters")).json()["data"]) == 1
    assert (await tenant.get(f"/v1/providers/{account.id}/inbound")).status_code == 404


async def test_a_plan_that_is_no_plan_changes_nothing_and_markup_stays_text(
    services: Services, api: httpx.AsyncClient
) -> None:
    acme = await make_tenant(services, api, "Acme")
    await add_user(services, "root@example.com", operator=True)
    action = f"/operator/tenants/{acme.tenant_id}/plan"
    async with browser(services) as client:
        csrf = await sign_in(client, "root@example.com")
        markup = await client.post(action, data={"csrf": csrf, "plan": "<b>FREE</b>"})
        long = await client.post(action, data={"csrf": csrf, "plan": "F" * 21})
        missing = await client.post(
            "/operator/tenants/01900000-0000-7000-8000-000000000000/plan",
            data={"csrf": csrf, "plan": "FREE"},
        )
    assert markup.status_code == 422 and "<b>FREE</b>" not in markup.text
    assert long.status_code == 422 and missing.status_code == 404
    assert (await services.tenant_admin.get(acme.tenant_id)).plan.value == "STARTUP"


async def test_every_new_form_without_its_csrf_token_is_refused(
    services: Services, tenant: TenantClient, api: httpx.AsyncClient
) -> None:
    account = await stored_provider(services, tenant.tenant_id)
    await dead_letter(services, tenant)
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER, operator=True)
    t = f"/t/{tenant.tenant_id}"
    forms = {
        f"{t}/providers/{account.id}/inbound": {"verification_key": "k"},
        f"{t}/providers/{account.id}/inbound/remove": {"go": "1"},
        f"{t}/webhooks/endpoints/enable": {"url": "https://x.example/h"},
        f"{t}/domains/missing/remove": {"go": "1"},
        f"{t}/dead-letters/purge": {"provider": ""},
        f"/operator/tenants/{tenant.tenant_id}/plan": {"plan": "FREE"},
    }
    async with browser(services) as client:
        await sign_in(client, OWNER)
        answers = {path: await client.post(path, data=form) for path, form in forms.items()}
    assert {path: a.status_code for path, a in answers.items()} == dict.fromkeys(forms, 403)
    assert len((await tenant.get("/v1/dead-letters")).json()["data"]) == 1
    assert (await services.tenant_admin.get(tenant.tenant_id)).plan.value == "STARTUP"
