"""A provider's pacing rules in the console: the vendor preset shown until an owner
overrides it, the override stored as ``PATCH /v1/providers/{id}`` stores it (and
audited with the config's diff), refused when the API's validation refuses it, and
reset to the preset; viewers read but cannot change."""

from __future__ import annotations

from typing import Any

from homing.domain.audit import AuditFilter
from homing.models import ActorKind, AuditAction, Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.conftest import register


async def _config(tenant: TenantClient, provider_id: str) -> dict[str, Any]:
    [account] = [
        p for p in (await tenant.get("/v1/providers")).json()["data"] if p["id"] == provider_id
    ]
    config: dict[str, Any] = account["config"]
    return config


async def _sms_provider(tenant: TenantClient, sandbox: SandboxServer) -> str:
    response = await tenant.post(
        "/v1/providers",
        json={
            "channel": "sms",
            "provider": "vonage",
            "credentials": {"api_key": "k", "api_secret": "vonage-secret"},
            "config": {"base_url": sandbox.provider_base_url("vonage")},
        },
    )
    assert response.status_code == 201, response.text
    provider_id: str = response.json()["id"]
    return provider_id


async def test_an_owner_overrides_the_preset_and_resets_it(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    vonage = await _sms_provider(tenant, sandbox)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    page = f"/t/{tenant.tenant_id}/providers/{vonage}/pacing"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        preset = await client.get(page)
        assert preset.status_code == 200 and "The vonage preset" in preset.text
        assert "<td>account</td><td>30</td><td>1</td>" in preset.text
        saved = await client.post(
            page,
            data={
                "csrf": csrf,
                **{"scope-0": "account", "limit-0": "10", "per_seconds-0": "1"},
                **{"scope-1": "recipient", "limit-1": " 2 ", "per_seconds-1": "60"},
                **{"scope-2": "", "limit-2": "", "per_seconds-2": ""},
            },
            follow_redirects=True,
        )
        assert saved.status_code == 200 and "own rules" in saved.text
        assert "<td>recipient</td><td>2</td><td>60</td>" in saved.text
        # Said once, by a flash, on the page itself: nothing in the address to replay.
        assert str(saved.url).endswith("/pacing") and "Saved: the next send" in saved.text
        assert "Saved: the next send" not in (await client.get(page)).text
        assert (await _config(tenant, vonage))["rate_rules"] == [
            {"scope": "account", "limit": 10, "per_seconds": 1},
            {"scope": "recipient", "limit": 2, "per_seconds": 60},
        ]
        reset = await client.post(f"{page}/reset", data={"csrf": csrf}, follow_redirects=True)
        assert "The vonage preset" in reset.text
        assert "Reset: the next send is paced by the vonage preset." in reset.text
    assert "rate_rules" not in await _config(tenant, vonage)
    assert (await _config(tenant, vonage))["base_url"] == sandbox.provider_base_url("vonage")
    f = AuditFilter(tenant_id=tenant.tenant_id, action=AuditAction.PROVIDER_UPDATED)
    events, _ = await services.audit.page(f, limit=10, cursor=None)
    reset_event, set_event = events
    assert all(e.actor.kind is ActorKind.USER and e.target_id == vonage for e in events)
    # Nested past the audit log's depth bound, each rule shows as "…".
    assert len(set_event.changes["config"]["to"]["rate_rules"]) == 2
    assert "rate_rules" not in set_event.changes["config"]["from"]
    assert "rate_rules" not in reset_event.changes["config"]["to"]


async def test_an_empty_table_turns_pacing_off(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    vonage = await _sms_provider(tenant, sandbox)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    page = f"/t/{tenant.tenant_id}/providers/{vonage}/pacing"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        off = await client.post(page, data={"csrf": csrf}, follow_redirects=True)
    assert "pacing is off for this account" in off.text
    assert (await _config(tenant, vonage))["rate_rules"] == []


async def test_rules_the_api_refuses_are_refused_and_shown_again(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    page = f"/t/{tenant.tenant_id}/providers/{resend['id']}/pacing"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        assert "resend has no preset" in (await client.get(page)).text
        for row, says in (
            ({"scope-0": "account", "limit-0": "0", "per_seconds-0": "1"}, "Rule 1, limit"),
            ({"scope-0": "account", "limit-0": "5", "per_seconds-0": "86401"}, "per seconds"),
            ({"scope-0": "everyone", "limit-0": "5", "per_seconds-0": "1"}, "Rule 1, scope"),
            ({"scope-0": "", "limit-0": "5", "per_seconds-0": "1"}, "Rule 1, scope"),
            ({"scope-0": "account", "limit-0": "1.5", "per_seconds-0": "1"}, "Rule 1, limit"),
        ):
            refused = await client.post(page, data={"csrf": csrf, **row})
            assert refused.status_code == 422, row
            assert says in refused.text and 'role="alert"' in refused.text
            assert f'value="{row["limit-0"]}"' in refused.text
    assert "rate_rules" not in await _config(tenant, resend["id"])


async def test_a_viewer_reads_the_rules_but_cannot_change_them(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    vonage = await _sms_provider(tenant, sandbox)
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    page = f"/t/{tenant.tenant_id}/providers/{vonage}/pacing"
    async with browser(services) as client:
        csrf = await sign_in(client, "vic@example.com")
        shown = await client.get(page)
        assert "The vonage preset" in shown.text and "Save rules" not in shown.text
        rule = {"scope-0": "account", "limit-0": "1", "per_seconds-0": "1"}
        assert (await client.post(page, data={"csrf": csrf, **rule})).status_code == 403
        assert (await client.post(f"{page}/reset", data={"csrf": csrf})).status_code == 403
    assert "rate_rules" not in await _config(tenant, vonage)
