"""Email layouts end to end, on SQLite and PostgreSQL: a layout is created, versioned
and published as a template is; a templated email renders inside it (in the render
pool, one round trip) and the vendor receives the framed HTML over real HTTP, its CSS
inlined and its text part derived after framing; the job records the layout version
used, and a later publish of the layout leaves an accepted job alone."""

from __future__ import annotations

from typing import Any

from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, stored_provider
from tests.e2e.conftest import Sandbox, deliver, job, register
from tests.e2e.test_templates import make_template, publish, send_templated

FRAME = (
    "<style>.frame { color: #111 }</style>"
    '<div class="frame"><h1>Acme {{ brand }}</h1>{{ content }}<p>Footer</p></div>'
)


async def make_layout(tenant: TenantClient, key: str = "brand", **body: Any) -> dict[str, Any]:
    response = await tenant.post("/v1/layouts", json={"key": key, **body})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def publish_layout(tenant: TenantClient, ref: str, html: str, **more: Any) -> dict[str, Any]:
    response = await tenant.post(f"/v1/layouts/{ref}/versions", json={"html": html, **more})
    assert response.status_code == 201, response.text
    version: dict[str, Any] = response.json()
    assert version["state"] == "draft"
    response = await tenant.post(f"/v1/layouts/{ref}/versions/{version['id']}/publish")
    assert response.status_code == 200, response.text
    published: dict[str, Any] = response.json()
    return published


async def test_an_email_renders_inside_its_layout_and_the_vendor_gets_the_framed_html(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    layout = await make_layout(tenant, name="Brand")
    v1 = await publish_layout(tenant, "brand", FRAME)
    await make_template(tenant)
    email = {"subject": "Hi", "html": "<p>Hello {{ name }}</p>", "layout": "brand"}
    await publish(tenant, "welcome", email=email)
    job_id = await send_templated(
        tenant, template="welcome", data={"name": "<b>Ann</b>", "brand": "<i>x</i>"}
    )
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert body["template"]["layout"] == {
        "id": layout["id"],
        "key": "brand",
        "version": v1["number"],
        "locale": "en",
    }
    [message] = await sb.messages("resend")
    html = message["html"]
    # The frame around the content, the CSS inlined after framing.
    assert '<div class="frame" style="color: #111;"><h1>Acme &lt;i&gt;x&lt;/i&gt;</h1>' in html
    # The template's output is escaped once, not twice, and data adds no markup.
    assert "<p>Hello &lt;b&gt;Ann&lt;/b&gt;</p><p>Footer</p>" in html
    assert "&amp;lt;" not in html
    assert message["text"] == "Acme <i>x</i>\n\nHello <b>Ann</b>\n\nFooter"
    shown = (await tenant.get("/v1/layouts/brand")).json()
    assert shown["locales"] == ["en"] and shown["name"] == "Brand"


async def test_the_default_layout_frames_emails_naming_none_and_none_opts_out(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await make_template(tenant, "plain")
    await publish(tenant, "plain", email={"subject": "A", "html": "<p>one</p>"})
    await make_template(tenant, "bare")
    await publish(tenant, "bare", email={"subject": "B", "html": "<p>two</p>", "layout": "none"})
    before = await send_templated(tenant, template="plain", data={})
    await make_layout(tenant, "default")
    await publish_layout(tenant, "default", "<table><tr><td>{{ content }}</td></tr></table>")
    framed = await send_templated(tenant, template="plain", data={})
    bare = await send_templated(tenant, template="bare", data={})
    assert await deliver(services) == 3
    sent = {m["job_id"]: m["html"] for m in await sb.messages("resend")}
    assert "<table>" not in sent[before] and "<table>" not in sent[bare]
    assert "<td><p>one</p></td>" in sent[framed]
    assert "layout" not in (await job(tenant, before))["template"]
    assert (await job(tenant, framed))["template"]["layout"]["key"] == "default"


async def test_a_v2_layout_published_after_accept_does_not_change_the_job(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await make_layout(tenant)
    await publish_layout(tenant, "brand", "<div>v1 {{ content }}</div>")
    await make_template(tenant)
    await publish(tenant, "welcome", email={"subject": "s", "html": "<p>x</p>", "layout": "brand"})
    first = await send_templated(tenant, template="welcome", data={})
    v2 = await publish_layout(tenant, "brand", "<div>v2 {{ content }}</div>")
    second = await send_templated(tenant, template="welcome", data={})
    assert await deliver(services) == 2
    sent = {m["job_id"]: m["html"] for m in await sb.messages("resend")}
    assert "<div>v1 <p>x</p></div>" in sent[first]
    assert "<div>v2 <p>x</p></div>" in sent[second]
    assert (await job(tenant, first))["template"]["layout"]["version"] == 1
    assert (await job(tenant, second))["template"]["layout"]["version"] == v2["number"]
    versions = (await tenant.get("/v1/layouts/brand/versions")).json()["data"]
    assert [(v["number"], v["state"]) for v in versions] == [(2, "published"), (1, "retired")]
    # A rollback: publishing the retired v1 again makes it live.
    again = await tenant.post(f"/v1/layouts/brand/versions/{versions[1]['id']}/publish")
    assert again.json()["state"] == "published"


async def test_layout_drafts_edit_and_refusals_are_what_a_client_can_act_on(
    services: Services, tenant: TenantClient
) -> None:
    await stored_provider(services, tenant.tenant_id)  # sends accepted, never delivered
    await make_layout(tenant)
    assert (await tenant.post("/v1/layouts", json={"key": "brand"})).status_code == 409
    assert (await tenant.post("/v1/layouts", json={"key": "none"})).status_code == 422
    missing = await tenant.post("/v1/layouts/brand/versions", json={"html": "<p>no slot</p>"})
    assert missing.status_code == 422 and missing.json()["error"]["code"] == "template_error"
    bad = await tenant.post("/v1/layouts/brand/versions", json={"html": "{{ content"})
    assert bad.status_code == 422
    draft = (await tenant.post("/v1/layouts/brand/versions", json={"html": "{{ content }}"})).json()
    path = f"/v1/layouts/brand/versions/{draft['id']}"
    edited = await tenant.patch(path, json={"html": "<b>{{ content }}</b>"})
    assert edited.status_code == 200 and edited.json()["html"] == "<b>{{ content }}</b>"
    assert (await tenant.patch(path, json={"html": "<b>no slot</b>"})).status_code == 422
    await tenant.post(f"{path}/publish")
    assert (await tenant.patch(path, json={"html": "{{ content }}!"})).status_code == 409
    # A template naming a layout that does not exist is refused at send.
    await make_template(tenant)
    await publish(tenant, "welcome", email={"subject": "s", "html": "x", "layout": "nope"})
    message = {"to": "a@example.com", "from": "hello@acme.example", "template": "welcome"}
    refused = await tenant.post("/v1/notifications/email", json={**message, "data": {}})
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "template_error"
    preview = await tenant.post("/v1/templates/welcome/preview", json={"data": {}})
    assert preview.status_code == 422
    assert (await tenant.delete("/v1/layouts/brand")).status_code == 204
    assert (await tenant.get("/v1/layouts/brand")).status_code == 404
