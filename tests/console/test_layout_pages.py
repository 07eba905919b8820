"""The console's layout pages, on both databases: an owner adds a layout, starts a
draft, edits it, previews it around a sample email in the sandboxed frame and
publishes it, each change audited as the API's are; the layout's page names the
templates it frames; refusals are shown beside their field with what was typed kept;
a viewer changes nothing; another tenant's layout is 404."""

from __future__ import annotations

import html

import httpx

from homing.domain.audit import AuditFilter
from homing.models import ActorKind, AuditAction, Role
from homing.services import Services
from tests.conftest import TenantClient, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.test_layouts import make_layout
from tests.e2e.test_templates import make_template, publish

OWNER = "ada@example.com"
FRAME = '<div class="frame">Acme {{ brand }} {{ content }}</div>'


async def _actions(services: Services, tenant_id: str) -> list[AuditAction]:
    f = AuditFilter(tenant_id=tenant_id)
    events, _ = await services.audit.page(f, limit=50, cursor=None)
    layouts = [e for e in events if e.target_type == "layout"]
    assert all((e.actor.kind, e.actor.name) == (ActorKind.USER, OWNER) for e in layouts)
    return sorted(e.action for e in layouts)


async def test_an_owner_adds_drafts_edits_previews_and_publishes_a_layout(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/layouts"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        empty = await client.get(base)
        added = await client.post(base, data={"csrf": csrf, "key": "brand", "name": "Brand"})
        page = await client.get(f"{base}/brand")
        drafted = await client.post(f"{base}/brand/versions", data={"csrf": csrf})
        path = f"{base}/brand/versions/1"
        starter = await client.get(path)
        saved = await client.post(path, data={"csrf": csrf, "action": "save", "html": FRAME})
        data = '{"brand": "<i>Co</i>"}'
        preview = await client.post(
            path, data={"csrf": csrf, "action": "preview", "html": FRAME, "data": data}
        )
        published = await client.post(path, data={"csrf": csrf, "action": "publish", "html": FRAME})
        shown = await client.get(path)
        listing = await client.get(base)
    assert "No layout yet" in empty.text and "{{ content }}" in empty.text
    assert (added.status_code, added.headers["location"]) == (303, f"{base}/brand")
    assert "No version yet" in page.text and "New draft" in page.text
    assert (drafted.status_code, drafted.headers["location"]) == (303, path)
    assert html.escape("{{ content }}") in starter.text or "{{ content }}" in starter.text
    assert saved.status_code == 303
    assert preview.status_code == 200
    frame = html.unescape(preview.text.split('srcdoc="', 1)[1].split('"', 1)[0])
    assert "A sample heading" in frame and "Acme &lt;i&gt;Co&lt;/i&gt;" in frame
    assert "default-src 'none'" in frame
    assert "'unsafe-inline'" in preview.headers["content-security-policy"]
    assert published.status_code == 303
    assert "readonly" in shown.text and "Save draft" not in shown.text
    assert "1 (en)" in listing.text
    layout = await services.layouts.get(tenant.tenant_id, "brand")
    version = await services.layouts.version(layout, 1)
    assert (version.state, version.parts) == ("published", {"html": FRAME})
    assert await _actions(services, tenant.tenant_id) == sorted(
        [
            AuditAction.LAYOUT_CREATED,
            AuditAction.LAYOUT_VERSION_ADDED,
            *[AuditAction.LAYOUT_VERSION_EDITED] * 3,
            AuditAction.LAYOUT_VERSION_PUBLISHED,
        ]
    )


async def test_a_layouts_page_names_the_templates_it_frames(
    services: Services, tenant: TenantClient
) -> None:
    await make_layout(tenant, "brand")
    await make_layout(tenant, "default")
    await make_template(tenant, "named")
    await publish(tenant, "named", email={"subject": "A", "html": "<p>a</p>", "layout": "brand"})
    await make_template(tenant, "plain")
    await publish(tenant, "plain", email={"subject": "B", "html": "<p>b</p>"})
    await make_template(tenant, "texty")
    await publish(tenant, "texty", email={"subject": "C", "text": "c"})
    await make_template(tenant, "drafty")
    draft = {"email": {"subject": "D", "html": "<p>d</p>", "layout": "brand"}}
    assert (await tenant.post("/v1/templates/drafty/versions", json=draft)).status_code == 201
    await add_user(services, OWNER, tenant.tenant_id, Role.VIEWER)
    base = f"/t/{tenant.tenant_id}/layouts"
    async with browser(services) as client:
        await sign_in(client, OWNER)
        brand = await client.get(f"{base}/brand")
        default = await client.get(f"{base}/default")
    assert "templates/named" in brand.text
    assert "templates/plain" not in brand.text and "templates/drafty" not in brand.text
    assert "templates/plain" in default.text
    assert "templates/named" not in default.text and "templates/texty" not in default.text


async def test_refusals_are_shown_beside_their_field_with_what_was_typed(
    services: Services, tenant: TenantClient
) -> None:
    await make_layout(tenant, "brand")
    first = {"html": "<div>{{ content }}</div>"}
    assert (await tenant.post("/v1/layouts/brand/versions", json=first)).status_code == 201
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/layouts"
    path = f"{base}/brand/versions/1"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)

        async def post(**form: str) -> httpx.Response:
            return await client.post(path, data={"csrf": csrf, "action": "save", **form})

        syntax = await post(html="<p>{{ content </p>")
        no_slot = await post(html="<p>no slot here</p>")
        too_big = await post(html="{{ content }}" + "x" * 70_000)
        locale = await post(html="{{ content }}", locale="not a locale")
        data = await post(html="{{ brand }}{{ content }}", action="preview", data="{}")
        reserved = await client.post(base, data={"csrf": csrf, "key": "none", "name": "N"})
        bad_key = await client.post(base, data={"csrf": csrf, "key": "Not A Key"})
    for answer, field, words in (
        (syntax, "html", "syntax error on line 1"),
        (no_slot, "html", "must show the email"),
        (too_big, "html", "over 65536 characters"),
        (locale, "locale", "Not a locale"),
        (data, "data", "lacks variables"),
        (reserved, "key", "reserved"),
        (bad_key, "key", "lower-case letters"),
    ):
        assert answer.status_code == 422, (field, answer.status_code)
        error = answer.text.split(f'id="{field}-error" role="alert">', 1)[1].split("<", 1)[0]
        assert words in error, (field, error)
    assert "&lt;p&gt;{{ content &lt;/p&gt;</textarea>" in syntax.text
    assert 'value="not a locale"' in locale.text
    assert 'value="Not A Key"' in bad_key.text
    # Only the preview's draft was saved (before it rendered); every refused one was not.
    layout = await services.layouts.get(tenant.tenant_id, "brand")
    saved = await services.layouts.version(layout, 1)
    assert saved.parts == {"html": "{{ brand }}{{ content }}"}


async def test_a_viewer_and_a_forged_token_change_nothing(
    services: Services, tenant: TenantClient
) -> None:
    await make_layout(tenant, "brand")
    first = {"html": "<div>{{ content }}</div>"}
    assert (await tenant.post("/v1/layouts/brand/versions", json=first)).status_code == 201
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/layouts"
    path = f"{base}/brand/versions/1"
    changed = {"action": "publish", "html": "<b>{{ content }}</b>"}
    async with browser(services) as viewer, browser(services) as owner:
        csrf = await sign_in(viewer, "vic@example.com")
        await sign_in(owner, OWNER)
        listing = await viewer.get(base)
        page = await viewer.get(path)
        answers = [
            await viewer.post(base, data={"csrf": csrf, "key": "mine"}),
            await viewer.post(f"{base}/brand/versions", data={"csrf": csrf}),
            await viewer.post(path, data={"csrf": csrf, **changed}),
            await owner.post(path, data={"csrf": "0" * 64, **changed}),
        ]
    assert "Add layout" not in listing.text
    assert page.status_code == 200 and "readonly" in page.text and "Publish" not in page.text
    assert [a.status_code for a in answers] == [403] * 4
    layout = await services.layouts.get(tenant.tenant_id, "brand")
    versions, _ = await services.layouts.versions(layout, 10, None)
    assert [(v.state, v.parts) for v in versions] == [("draft", first)]
    assert await services.layouts.page(tenant.tenant_id, 10, None) == ([layout], False)


async def test_another_tenants_layout_is_404_everywhere(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    mallory = await make_tenant(services, api, "mallory")
    await make_layout(tenant, "secret-frame", name="Only Acme")
    first = {"html": "<div>only-acme {{ content }}</div>"}
    assert (await tenant.post("/v1/layouts/secret-frame/versions", json=first)).status_code == 201
    await add_user(services, "eve@example.com", mallory.tenant_id, Role.OWNER)
    theirs = f"/t/{tenant.tenant_id}/layouts"
    mine = f"/t/{mallory.tenant_id}/layouts"
    form = {"action": "publish", "html": "<b>{{ content }}</b>", "key": "x"}
    async with browser(services) as client:
        csrf = await sign_in(client, "eve@example.com")
        answers = [
            await client.get(theirs),
            await client.get(f"{theirs}/secret-frame"),
            await client.get(f"{theirs}/secret-frame/versions/1"),
            await client.post(theirs, data={"csrf": csrf, **form}),
            await client.post(f"{theirs}/secret-frame/versions", data={"csrf": csrf}),
            await client.post(f"{theirs}/secret-frame/versions/1", data={"csrf": csrf, **form}),
            await client.get(f"{mine}/secret-frame"),
            await client.get(f"{mine}/secret-frame/versions/1"),
            await client.post(f"{mine}/secret-frame/versions", data={"csrf": csrf}),
            await client.post(f"{mine}/secret-frame/versions/1", data={"csrf": csrf, **form}),
        ]
        own_list = await client.get(mine)
    assert [a.status_code for a in answers] == [404] * 10
    assert all("only-acme" not in a.text and "Only Acme" not in a.text for a in answers)
    assert "secret-frame" not in own_list.text
    layout = await services.layouts.get(tenant.tenant_id, "secret-frame")
    [version], _ = await services.layouts.versions(layout, 10, None)
    assert (version.state, version.parts) == ("draft", first)
