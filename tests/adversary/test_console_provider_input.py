"""A hostile owner at the console's provider, pacing and suppression forms: a vendor
that does not exist, over-long fields and forms, more rules than the table has, numbers
that are not numbers, an endpoint Homing may not call, another tenant's provider (404
exactly like a missing one), a form without its CSRF token, and a viewer."""

from __future__ import annotations

import httpx

from homing.channels import Channel
from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.conftest import register

MISSING = "01900000-0000-7000-8000-000000000000"


async def _owner(services: Services, tenant: TenantClient) -> None:
    await add_user(services, "mallory@example.com", tenant.tenant_id, Role.OWNER)


async def test_an_unknown_vendor_is_refused_at_both_steps(
    services: Services, tenant: TenantClient
) -> None:
    await _owner(services, tenant)
    base = f"/t/{tenant.tenant_id}/providers/new"
    async with browser(services) as client:
        csrf = await sign_in(client, "mallory@example.com")
        chosen = await client.get(base, params={"vendor": "../../etc"})
        posted = await client.post(base, data={"csrf": csrf, "vendor": "webhook", "x": "y"})
        long = await client.get(base, params={"vendor": "s" * 21})
    assert chosen.status_code == 422 and "Choose a provider from the list" in chosen.text
    assert posted.status_code == 422 and long.status_code == 422
    assert await services.providers.all(tenant.tenant_id) == []


async def test_over_long_fields_and_forms_are_refused_not_cut(
    services: Services, tenant: TenantClient
) -> None:
    await _owner(services, tenant)
    base = f"/t/{tenant.tenant_id}/providers/new"
    async with browser(services) as client:
        csrf = await sign_in(client, "mallory@example.com")
        field = await client.post(
            base, data={"csrf": csrf, "vendor": "resend", "api_key": "k" * 1001}
        )
        body = await client.post(
            base, data={"csrf": csrf, "vendor": "resend", "api_key": "k" * 17_000}
        )
        fields = await client.post(
            base, data={"csrf": csrf, "vendor": "resend", **{f"f{n}": "1" for n in range(60)}}
        )
    assert field.status_code == 422 and "at most 1000 characters" in field.text
    assert "k" * 100 not in field.text
    assert body.status_code == 413 and fields.status_code == 422
    assert await services.providers.all(tenant.tenant_id) == []


async def test_an_endpoint_homing_may_not_call_is_refused_before_any_call(
    services: Services, tenant: TenantClient
) -> None:
    await _owner(services, tenant)
    async with browser(services) as client:
        csrf = await sign_in(client, "mallory@example.com")
        refused = await client.post(
            f"/t/{tenant.tenant_id}/providers/new",
            data={
                "csrf": csrf,
                "vendor": "resend",
                "api_key": "re_a_key_of_mallory",
                "base_url": "http://169.254.169.254/latest/meta-data",
            },
        )
    assert refused.status_code == 422 and 'role="alert"' in refused.text
    assert "re_a_key_of_mallory" not in refused.text
    assert await services.providers.all(tenant.tenant_id) == []


async def test_more_rules_than_the_table_and_bad_numbers_are_refused(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    await _owner(services, tenant)
    page = f"/t/{tenant.tenant_id}/providers/{resend['id']}/pacing"
    rule = {"scope-0": "account", "per_seconds-0": "1"}
    async with browser(services) as client:
        csrf = await sign_in(client, "mallory@example.com")
        ninth = await client.post(
            page, data={"csrf": csrf, "scope-8": "account", "limit-8": "1", "per_seconds-8": "1"}
        )
        stray = await client.post(page, data={"csrf": csrf, "rate_rules": "[]"})
        answers = [
            await client.post(page, data={"csrf": csrf, **rule, "limit-0": limit})
            for limit in ("-1", "1e3", "NaN", "0x10", "ten", "1000001", "9" * 13)
        ]
    assert ninth.status_code == 422 and "At most 8 rules" in ninth.text
    assert stray.status_code == 422
    assert [a.status_code for a in answers] == [422] * 7
    account = await services.providers.get(tenant.tenant_id, resend["id"])
    assert "rate_rules" not in account.config


async def test_another_tenants_provider_is_404_exactly_like_a_missing_one(
    services: Services, tenant: TenantClient, api: httpx.AsyncClient, sandbox: SandboxServer
) -> None:
    other = await make_tenant(services, api, "other")
    theirs = await register(other, sandbox, "resend", 1)
    await _owner(services, tenant)
    base = f"/t/{tenant.tenant_id}/providers"
    async with browser(services) as client:
        csrf = await sign_in(client, "mallory@example.com")
        answers = {}
        for target in (theirs["id"], MISSING):
            for method, path in (
                ("GET", "/pacing"),
                ("POST", "/pacing"),
                ("POST", "/pacing/reset"),
                ("GET", "/remove"),
                ("POST", "/remove"),
            ):
                data = {"csrf": csrf, "scope-0": "account", "limit-0": "1", "per_seconds-0": "1"}
                answer = await client.request(
                    method, f"{base}/{target}{path}", data=data if method == "POST" else None
                )
                answers[(target == MISSING, method, path)] = (answer.status_code, answer.text)
    for (missing, method, path), (status, text) in answers.items():
        assert status == 404, (method, path)
        if not missing:
            twin = answers[(True, method, path)][1]
            assert text.replace(theirs["id"], MISSING) == twin, (method, path)
    [account] = await services.providers.all(other.tenant_id)
    assert account.enabled and "rate_rules" not in account.config


async def test_every_form_without_its_csrf_token_is_refused(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    await services.suppressions.add(
        tenant.tenant_id, Channel.EMAIL, "ada@example.com", "manual", "api"
    )
    await _owner(services, tenant)
    t = f"/t/{tenant.tenant_id}"
    async with browser(services) as client:
        await sign_in(client, "mallory@example.com")
        for path, data in (
            ("/providers/new", {"vendor": "resend", "api_key": "re_key"}),
            (f"/providers/{resend['id']}/remove", {}),
            (f"/providers/{resend['id']}/pacing", {"scope-0": "account"}),
            (f"/providers/{resend['id']}/pacing/reset", {}),
            ("/suppressions", {"channel": "email", "address": "grace@example.com"}),
            ("/suppressions/remove", {"channel": "email", "address": "ada@example.com"}),
        ):
            answer = await client.post(t + path, data={"csrf": "0" * 64, **data})
            assert answer.status_code == 403, path
    assert len(await services.providers.all(tenant.tenant_id)) == 1
    page = await services.suppressions.page(tenant.tenant_id)
    assert [e.address for e in page.entries] == ["ada@example.com"]


async def test_suppression_input_is_bounded_and_a_viewer_changes_nothing(
    services: Services, tenant: TenantClient
) -> None:
    await services.suppressions.add(
        tenant.tenant_id, Channel.EMAIL, "ada@example.com", "manual", "api"
    )
    await _owner(services, tenant)
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    base = f"/t/{tenant.tenant_id}/suppressions"
    async with browser(services) as owner, browser(services) as viewer:
        csrf = await sign_in(owner, "mallory@example.com")
        long = await owner.post(base, data={"csrf": csrf, "address": "a" * 310 + "@example.com"})
        chat = await owner.post(base, data={"csrf": csrf, "channel": "chat", "address": "x:1"})
        reason = await owner.post(
            base, data={"csrf": csrf, "address": "grace@example.com", "reason": "spite"}
        )
        search = await owner.get(base, params={"q": "a" * 321})
        cursor = await owner.get(base, params={"cursor": "a" * 321})
        gone = await owner.post(
            f"{base}/remove", data={"csrf": csrf, "channel": "webhook", "address": "x"}
        )
        seen = await sign_in(viewer, "vic@example.com")
        added = await viewer.post(base, data={"csrf": seen, "address": "grace@example.com"})
        removed = await viewer.post(
            f"{base}/remove", data={"csrf": seen, "channel": "email", "address": "ada@example.com"}
        )
    assert long.status_code == 422 and chat.status_code == 422 and reason.status_code == 422
    assert search.status_code == 422 and cursor.status_code == 422 and gone.status_code == 422
    assert added.status_code == 403 and removed.status_code == 403
    page = await services.suppressions.page(tenant.tenant_id)
    assert [e.address for e in page.entries] == ["ada@example.com"]
