"""Adding a provider in the console: the vendor first, then its fields; the
credentials checked with the (sandbox) provider before they are kept; a refusal shown
with the provider's answer and no secret sent back; the same audit event as
``POST /v1/providers``; removing one after a confirm step; viewers refused."""

from __future__ import annotations

import re

from homing.domain.audit import AuditEvent, AuditFilter
from homing.managers.provider_fields import VENDOR_FIELDS
from homing.models import ActorKind, AuditAction, Role
from homing.providers.registry import CREDENTIAL_FIELDS, SECRET_CREDENTIAL_FIELDS
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, deliver, job
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.conftest import register, send

KEY = "re_console_key_4f9a2c7d1e"
REFUSED = "re_invalid_console_key_8b3e"


async def _events(services: Services, tenant_id: str, action: AuditAction) -> list[AuditEvent]:
    f = AuditFilter(tenant_id=tenant_id, action=action)
    events, _ = await services.audit.page(f, limit=50, cursor=None)
    return [e for e in events if e.actor.kind is ActorKind.USER]


def test_the_form_table_asks_for_what_the_manager_requires() -> None:
    for vendor, required in CREDENTIAL_FIELDS.items():
        fields = VENDOR_FIELDS[vendor]
        assert [f.name for f in fields if f.required] == list(required)
        for f in fields:
            if not f.config:
                assert f.secret == (f.name in SECRET_CREDENTIAL_FIELDS), (vendor, f.name)


async def test_an_owner_adds_a_provider_whose_credentials_the_provider_accepts(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "postmark", 10)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/providers"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        assert 'href="' + base + '/new"' in (await client.get(base)).text
        first = await client.get(f"{base}/new")
        assert first.status_code == 200 and '<optgroup label="SMS">' in first.text
        fields = await client.get(f"{base}/new", params={"vendor": "resend"})
        assert 'name="api_key"' in fields.text and 'type="password"' in fields.text
        added = await client.post(
            f"{base}/new",
            data={
                "csrf": csrf,
                "vendor": "resend",
                "api_key": KEY,
                "base_url": sandbox.provider_base_url("resend"),
            },
        )
        assert added.status_code == 303, added.text
        listed = await client.get(base)
    assert KEY not in listed.text
    assert "resend added, its credentials checked: last in the email fallback" in listed.text
    resend = next(
        p for p in (await tenant.get("/v1/providers")).json()["data"] if p["provider"] == "resend"
    )
    assert resend["priority"] == 20 and resend["credentials_preview"] in listed.text
    assert added.headers["location"] == f"{base}#p-{resend['id']}"
    assert listed.text.index("postmark") < listed.text.index(resend["credentials_preview"])
    [event] = await _events(services, tenant.tenant_id, AuditAction.PROVIDER_ADDED)
    assert event.actor.kind is ActorKind.USER and event.actor.name == "ada@example.com"
    assert event.target_id == resend["id"]
    assert event.changes["credentials"] == "changed" and KEY not in str(event.changes)
    assert event.changes["provider"] == "resend" and event.changes["channel"] == "email"
    await tenant.patch(f"/v1/providers/{resend['id']}", json={"priority": 1})
    job_id = await send(tenant)
    assert await deliver(services) == 1
    assert (await job(tenant, job_id))["provider"] == "resend"


async def test_refused_credentials_show_the_form_again_with_the_reason_and_no_secret(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    url = sandbox.provider_base_url("sendgrid")
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        refused = await client.post(
            f"/t/{tenant.tenant_id}/providers/new",
            data={"csrf": csrf, "vendor": "sendgrid", "api_key": REFUSED, "base_url": url},
        )
    assert refused.status_code == 422
    assert "sendgrid" in refused.text and 'role="alert"' in refused.text
    assert REFUSED not in refused.text and "invalid_console" not in refused.text
    assert re.search(r'name="api_key"[^>]*type="password" value=""', refused.text)
    assert f'value="{url}"' in refused.text
    assert (await tenant.get("/v1/providers")).json()["data"] == []
    assert await _events(services, tenant.tenant_id, AuditAction.PROVIDER_ADDED) == []


async def test_a_missing_required_field_is_named(services: Services, tenant: TenantClient) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        missing = await client.post(
            f"/t/{tenant.tenant_id}/providers/new",
            data={"csrf": csrf, "vendor": "twilio", "account_sid": "AC123", "auth_token": ""},
        )
    assert missing.status_code == 422 and "Auth token: this field is needed" in missing.text
    assert 'value="AC123"' in missing.text


async def test_an_owner_removes_a_provider_after_confirming(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/providers/{resend['id']}/remove"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        confirm = await client.get(base)
        assert confirm.status_code == 200 and "cannot be undone" in confirm.text
        assert (await tenant.get("/v1/providers")).json()["data"] != []
        removed = await client.post(base, data={"csrf": csrf})
        assert removed.status_code == 303
        told = await client.get(removed.headers["location"])
        assert "resend removed: sends no longer try it" in told.text
        again = await client.post(base, data={"csrf": csrf})
    assert again.status_code == 404
    assert (await tenant.get("/v1/providers")).json()["data"] == []
    [event] = await _events(services, tenant.tenant_id, AuditAction.PROVIDER_REMOVED)
    assert event.target_id == resend["id"] and event.actor.kind is ActorKind.USER


async def test_a_viewer_can_neither_add_nor_remove(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    base = f"/t/{tenant.tenant_id}/providers"
    async with browser(services) as client:
        csrf = await sign_in(client, "vic@example.com")
        listed = await client.get(base)
        assert f"{base}/new" not in listed.text and "/remove" not in listed.text
        assert (await client.get(f"{base}/new")).status_code == 403
        assert (await client.get(f"{base}/{resend['id']}/remove")).status_code == 403
        added = await client.post(
            f"{base}/new",
            data={"csrf": csrf, "vendor": "resend", "api_key": KEY},
        )
        removed = await client.post(f"{base}/{resend['id']}/remove", data={"csrf": csrf})
    assert added.status_code == 403 and removed.status_code == 403
    assert [p["id"] for p in (await tenant.get("/v1/providers")).json()["data"]] == [resend["id"]]
