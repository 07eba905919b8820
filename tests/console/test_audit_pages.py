"""The console's changes are audited with the signed-in user as the actor (the same
events as their API twins, never a secret), and the console shows the audit log: a
tenant's own to its owners, every tenant's to operators."""

from __future__ import annotations

import re
from typing import Any

import httpx
from sqlalchemy import select

from homing.domain.audit import AuditEvent, AuditFilter
from homing.models import Actor, ActorKind, AuditAction, Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.store.tables.audit import audit_events
from tests.conftest import TenantClient, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.dead_letter_helpers import dead_letter
from tests.e2e.conftest import register


async def _events(services: Services, tenant_id: str | None) -> list[AuditEvent]:
    events, _ = await services.audit.page(AuditFilter(tenant_id=tenant_id), limit=200, cursor=None)
    return events


def _user_events(events: list[AuditEvent]) -> list[AuditEvent]:
    return [e for e in events if e.actor.kind is ActorKind.USER]


async def test_each_change_through_the_console_records_one_event_by_the_user(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    postmark = await register(tenant, sandbox, "postmark", 2)
    await dead_letter(services, tenant, provider="resend")
    ada = await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}"
    secrets: list[str] = []
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")

        async def post(path: str, **data: str) -> httpx.Response:
            answer = await client.post(
                base + path, data={"csrf": csrf, **data}, follow_redirects=True
            )
            assert answer.status_code == 200, (path, answer.text)
            return answer

        made = await post("/api-keys", name="deploy")
        key = re.search(r'class="secret" id="flash-secret-1">(hk_[A-Za-z0-9_-]+)<', made.text)
        assert key
        secrets.append(key.group(1))
        key_id = (await services.keys.live(tenant.tenant_id))[-1].id
        await post(f"/api-keys/{key_id}/revoke")
        for path in ("/webhooks/secret", "/webhooks/secret/rotate"):
            shown = re.search(r"(whsec_[A-Za-z0-9+/=_-]{20,})", (await post(path)).text)
            assert shown, path
            secrets.append(shown.group(1))
        await post("/webhooks/secret/delete")
        await post(f"/providers/{resend['id']}/enabled", enabled="0")
        await post(f"/providers/{postmark['id']}/move", direction="up")
        await post("/domains", domain="mail.acme.example", provider_account_id=resend["id"])
        await post("/dead-letters/redrive", dry_run="1")
        await post("/dead-letters/redrive", provider="resend")
        await post("/dead-letters/redrive", provider="resend")  # nothing left: no event
    events = _user_events(await _events(services, tenant.tenant_id))
    assert [e.action for e in reversed(events)] == [
        AuditAction.API_KEY_ISSUED,
        AuditAction.API_KEY_REVOKED,
        AuditAction.WEBHOOK_SECRET_CREATED,
        AuditAction.WEBHOOK_SECRET_ROTATED,
        AuditAction.WEBHOOK_SECRET_DELETED,
        AuditAction.PROVIDER_UPDATED,
        AuditAction.PROVIDER_REORDERED,
        AuditAction.PROVIDER_REORDERED,
        AuditAction.DOMAIN_ADDED,
        AuditAction.DEAD_LETTERS_REDRIVEN,
    ]
    assert {e.actor for e in events} == {Actor(ActorKind.USER, ada.id, "ada@example.com")}
    assert {e.tenant_id for e in events} == {tenant.tenant_id}
    by_action: dict[AuditAction, list[AuditEvent]] = {}
    for e in reversed(events):
        by_action.setdefault(e.action, []).append(e)
    assert by_action[AuditAction.API_KEY_ISSUED][0].changes == {"name": "deploy", "test": False}
    assert by_action[AuditAction.API_KEY_REVOKED][0].target_id == key_id
    assert by_action[AuditAction.WEBHOOK_SECRET_ROTATED][0].changes == {"secret": "changed"}
    assert by_action[AuditAction.PROVIDER_UPDATED][0].changes == {
        "enabled": {"from": True, "to": False}
    }
    moves = {e.target_id: e.changes for e in by_action[AuditAction.PROVIDER_REORDERED]}
    assert moves == {
        postmark["id"]: {"priority": {"from": 2, "to": 10}},
        resend["id"]: {"priority": {"from": 1, "to": 20}},
    }
    domain = by_action[AuditAction.DOMAIN_ADDED][0]
    assert domain.changes == {"domain": "mail.acme.example", "provider_account_id": resend["id"]}
    assert domain.target_id is not None
    assert by_action[AuditAction.DEAD_LETTERS_REDRIVEN][0].changes == {
        "filter": {"provider": "resend"},
        "ids": None,
        "redriven": 1,
    }
    async with services.db.transaction() as conn:
        dump = repr([tuple(row) for row in (await conn.execute(select(audit_events))).all()])
    assert len(secrets) == 3
    for secret in secrets:
        assert secret not in dump and secret[8:-4] not in dump


async def test_a_refused_console_change_records_nothing(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    key_id = (await services.keys.live(tenant.tenant_id))[0].id
    base = f"/t/{tenant.tenant_id}"
    async with browser(services) as owner, browser(services) as viewer:
        csrf = await sign_in(owner, "ada@example.com")
        last = await owner.post(f"{base}/api-keys/{key_id}/revoke", data={"csrf": csrf})
        gone = await owner.post(f"{base}/webhooks/secret/delete", data={"csrf": csrf})
        viewer_csrf = await sign_in(viewer, "vic@example.com")
        refused = await viewer.post(f"{base}/api-keys", data={"csrf": viewer_csrf, "name": "x"})
    assert (last.status_code, gone.status_code, refused.status_code) == (409, 404, 403)
    assert _user_events(await _events(services, tenant.tenant_id)) == []


async def test_an_operators_suspend_and_resume_are_recorded_and_shown_to_both(
    services: Services, api: httpx.AsyncClient
) -> None:
    acme = await make_tenant(services, api, "Acme")
    root = await add_user(services, "root@example.com", operator=True)
    await add_user(services, "ada@example.com", acme.tenant_id, Role.OWNER)
    async with browser(services) as operator, browser(services) as owner:
        csrf = await sign_in(operator, "root@example.com")
        for step in ("suspend", "resume"):
            done = await operator.post(
                f"/operator/tenants/{acme.tenant_id}/{step}", data={"csrf": csrf}
            )
            assert done.status_code == 303
        everyone = await operator.get("/operator/audit")
        narrowed = await operator.get(
            "/operator/audit", params={"tenant_id": acme.tenant_id, "action": "tenant.suspended"}
        )
        await sign_in(owner, "ada@example.com")
        theirs = await owner.get(f"/t/{acme.tenant_id}/audit")
    events = _user_events(await _events(services, acme.tenant_id))
    assert [e.action for e in events] == [AuditAction.TENANT_RESUMED, AuditAction.TENANT_SUSPENDED]
    assert {e.actor for e in events} == {Actor(ActorKind.USER, root.id, "root@example.com")}
    assert [e.changes for e in events] == [{"suspended": False}, {"suspended": True}]
    assert everyone.status_code == 200 and 'href="/operator/audit" aria-current="page"' in (
        everyone.text
    )
    # ... and after the two users the test began with (``homing user add``'s path).
    assert _rows(everyone.text) == ["tenant.resumed", "tenant.suspended", *["user.added"] * 2]
    assert acme.tenant_id in everyone.text and "root@example.com" in everyone.text
    assert _rows(narrowed.text) == ["tenant.suspended"]
    assert theirs.status_code == 200
    assert _rows(theirs.text) == ["tenant.resumed", "tenant.suspended", "user.added"]


_ROW = re.compile(
    r'<tr class="audit-event">.*?<code class="action">([a-z_]+\.[a-z_]+)</code>', re.DOTALL
)


def _rows(html: str) -> list[str]:
    """The actions of an audit page's rows, in the page's order."""
    return _ROW.findall(html)


async def _seed(services: Services, tenant_id: str, count: int, **extra: Any) -> None:
    for n in range(count):
        await services.audit.record(
            services.audit.event(
                Actor(ActorKind.CLI, "homing"),
                AuditAction.API_KEY_ISSUED if n % 2 else AuditAction.SUPPRESSION_ADDED,
                tenant_id=tenant_id,
                target_type="api_key",
                changes={"n": n, **extra},
            )
        )


async def test_the_owner_sees_the_tenants_audit_log_newest_first_filtered_and_paged(
    services: Services, tenant: TenantClient
) -> None:
    await _seed(services, tenant.tenant_id, 60)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    page = f"/t/{tenant.tenant_id}/audit"
    async with browser(services) as client:
        await sign_in(client, "ada@example.com")
        overview = await client.get(f"/t/{tenant.tenant_id}/")
        first = await client.get(page)
        older = re.search(r'href="([^"]+)">Older events</a>', first.text)
        assert older, first.text
        second = await client.get(older.group(1).replace("&amp;", "&"))
        keys = await client.get(page, params={"action": "api_key.issued"})
    assert f'href="{page}"' in overview.text
    assert first.status_code == 200 and len(_rows(first.text)) == 50
    # 61 events: the 60 seeded and ada's own user.added (the newest).
    assert len(_rows(second.text)) == 11 and "Older events" not in second.text
    assert first.text.index("<dt>n</dt><dd>59</dd>") < first.text.index("<dt>n</dt><dd>58</dd>")
    assert "<dt>n</dt><dd>0</dd>" in second.text
    assert set(_rows(keys.text)) == {"api_key.issued"} and len(_rows(keys.text)) == 30


async def test_an_event_reads_as_words_and_a_change_as_old_and_new(
    services: Services, tenant: TenantClient
) -> None:
    """Not raw JSON: the action in words beside its code, each field on its own, a
    change as "old → new"."""
    await services.audit.record(
        services.audit.event(
            Actor(ActorKind.CLI, "homing"),
            AuditAction.PROVIDER_UPDATED,
            tenant_id=tenant.tenant_id,
            target_type="provider",
            changes={"enabled": {"from": True, "to": False}, "name": {"from": None, "to": "b"}},
        )
    )
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        await sign_in(client, "ada@example.com")
        page = await client.get(f"/t/{tenant.tenant_id}/audit")
    row = page.text.split('<tr class="audit-event">')[2]  # the newest but ada's user.added
    assert 'Provider updated<br><small><code class="action">provider.updated</code>' in row
    assert "<dt>enabled</dt><dd>true → false</dd>" in row
    assert "<dt>name</dt><dd>— → b</dd>" in row
    assert "&#34;" not in row
    assert '<option value="provider.updated">Provider updated</option>' in page.text


async def test_a_viewer_is_refused_the_audit_log_and_another_tenants_user_gets_404(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    await _seed(services, tenant.tenant_id, 1)
    other = await make_tenant(services, api, "other")
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    await add_user(services, "eve@example.com", other.tenant_id, Role.OWNER)
    page = f"/t/{tenant.tenant_id}/audit"
    async with browser(services) as viewer, browser(services) as stranger:
        await sign_in(viewer, "vic@example.com")
        refused = await viewer.get(page)
        overview = await viewer.get(f"/t/{tenant.tenant_id}/")
        operators = await viewer.get("/operator/audit")
        await sign_in(stranger, "eve@example.com")
        missing = await stranger.get(page)
        not_theirs = await stranger.get("/operator/audit")
    assert refused.status_code == 403 and "owners see this page" in refused.text
    assert "audit-event" not in refused.text
    assert overview.status_code == 200 and f'href="{page}"' not in overview.text
    assert operators.status_code == 404
    assert missing.status_code == 404 and "no such tenant among yours" in missing.text
    assert not_theirs.status_code == 404
