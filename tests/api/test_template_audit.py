"""Template and layout changes are audited (docs/operations.md, "Audit log"): each
change records its event, with the API key or console user as the actor, in the
change's own transaction; a refused change records nothing, and the content itself
never reaches the audit table."""

from __future__ import annotations

from typing import Any

from homing.models import Role
from homing.services import Services
from tests.conftest import TenantClient
from tests.console_helpers import add_user, browser, sign_in

SECRET = "content-never-audited"


async def _log(tenant: TenantClient) -> list[dict[str, Any]]:
    answer = await tenant.get("/v1/audit-log", params={"limit": 100})
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()["data"]
    return list(reversed(events))


async def test_template_and_layout_changes_are_recorded_and_refusals_are_not(
    tenant: TenantClient,
) -> None:
    created = (await tenant.post("/v1/templates", json={"key": "welcome"})).json()
    email = {"subject": SECRET, "html": f"<p>{SECRET}</p>"}
    v1 = (await tenant.post("/v1/templates/welcome/versions", json={"email": email})).json()
    path = f"/v1/templates/welcome/versions/{v1['id']}"
    assert (await tenant.patch(path, json={"sms": {"body": SECRET}})).status_code == 200
    assert (await tenant.post(f"{path}/publish")).status_code == 200
    v2 = (await tenant.post("/v1/templates/welcome/versions", json={"email": email})).json()
    await tenant.post(f"/v1/templates/welcome/versions/{v2['id']}/publish")
    assert (await tenant.post(f"{path}/publish")).status_code == 200  # a rollback
    # Refused: a published version cannot change, a taken key, a bad part.
    assert (await tenant.patch(path, json={"sms": {"body": "x"}})).status_code == 409
    assert (await tenant.post("/v1/templates", json={"key": "welcome"})).status_code == 409
    bad = {"email": {"subject": "{{ x", "text": "t"}}
    assert (await tenant.post("/v1/templates/welcome/versions", json=bad)).status_code == 422
    await tenant.post("/v1/layouts", json={"key": "default"})
    lv = (await tenant.post("/v1/layouts/default/versions", json={"html": "{{ content }}"})).json()
    await tenant.patch(
        f"/v1/layouts/default/versions/{lv['id']}", json={"html": "<b>{{ content }}</b>"}
    )
    await tenant.post(f"/v1/layouts/default/versions/{lv['id']}/publish")
    assert (await tenant.delete("/v1/layouts/default")).status_code == 204
    assert (await tenant.delete("/v1/templates/welcome")).status_code == 204
    events = await _log(tenant)
    assert [e["action"] for e in events] == [
        "template.created",
        "template.version_added",
        "template.version_edited",
        "template.version_published",
        "template.version_added",
        "template.version_published",
        "template.version_published",
        "layout.created",
        "layout.version_added",
        "layout.version_edited",
        "layout.version_published",
        "layout.deleted",
        "template.deleted",
    ]
    first = events[0]
    assert first["target_type"] == "template" and first["target_id"] == created["id"]
    assert first["actor"]["kind"] == "api_key"
    assert events[1]["changes"] == {"key": "welcome", "version": 1, "locale": "en"}
    assert events[2]["changes"]["parts"] == ["sms"]
    assert events[6]["changes"] == {
        "key": "welcome",
        "version": 1,
        "locale": "en",
        "rollback": True,
    }
    assert SECRET not in str(events)


async def test_a_console_change_records_the_user(services: Services, tenant: TenantClient) -> None:
    await add_user(services, "owner@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "owner@example.com")
        base = f"/t/{tenant.tenant_id}/templates"
        added = await client.post(base, data={"csrf": csrf, "key": "hello", "name": "Hello"})
        draft = await client.post(f"{base}/hello/versions", data={"csrf": csrf})
        form = {"csrf": csrf, "action": "publish", "email_subject": "Hi", "email_text": "t"}
        published = await client.post(f"{base}/hello/versions/1", data=form)
    assert [added.status_code, draft.status_code, published.status_code] == [303] * 3
    events = [e for e in await _log(tenant) if e["action"].startswith("template.")]
    assert [e["action"] for e in events] == [
        "template.created",
        "template.version_added",
        "template.version_edited",
        "template.version_published",
    ]
    assert {e["actor"]["kind"] for e in events} == {"user"}
    assert {e["actor"]["name"] for e in events} == {"owner@example.com"}
