"""A hostile person at the console's layout pages: every form and field is bounded
(refused, never cut), hostile Jinja typed into a layout is refused beside its field
(the runaway ones by the render budget) and the render pool serves the next preview,
markup typed anywhere is shown as text (the preview only inside the sandboxed frame),
another tenant's layout is 404 by key and by id, and a bad number or ref in the URL is
422 before anything is read."""

from __future__ import annotations

import html

import httpx
import pytest

from homing.models import Role
from homing.services import Services
from tests.adversary.test_hostile_templates import HOSTILE
from tests.conftest import TenantClient, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.test_layouts import make_layout

OWNER = "owner@example.com"
FIRST = {"html": "<div>{{ content }}</div>"}
# A runaway loop, a runaway output, recursion, and three reaches outside the sandbox.
CHOSEN = (
    "nested range",
    "huge string",
    "macro recursion",
    "mro walk",
    "globals via lipsum",
    "include a file",
)


async def _drafted(services: Services, tenant: TenantClient) -> str:
    """The layout ``brand`` with draft 1, an owner, and the draft's page."""
    await make_layout(tenant, "brand")
    assert (await tenant.post("/v1/layouts/brand/versions", json=FIRST)).status_code == 201
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    return f"/t/{tenant.tenant_id}/layouts/brand/versions/1"


async def _stored(services: Services, tenant: TenantClient) -> dict[str, str]:
    layout = await services.layouts.get(tenant.tenant_id, "brand")
    return (await services.layouts.version(layout, 1)).parts


def _textarea(page: str) -> str:
    return html.unescape(page.split('name="html"', 1)[1].split(">", 1)[1].split("</textarea>")[0])


def _error(page: str, field: str) -> str:
    return page.split(f'id="{field}-error" role="alert">', 1)[1].split("<", 1)[0]


async def test_every_layout_form_and_field_is_bounded(
    services: Services, tenant: TenantClient
) -> None:
    path = await _drafted(services, tenant)
    base = f"/t/{tenant.tenant_id}/layouts"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        answers = [
            await client.post(path, data={"csrf": csrf, "html": "x" * 1_100_000}),
            await client.post(path, data={"csrf": csrf, "html": "{{ content }}" * 21_000}),
            await client.post(path, data={"csrf": csrf, "data": "{" * 70_000}),
            await client.post(path, data={"csrf": csrf, "locale": "en-" + "a" * 40}),
            await client.post(path, data={"csrf": csrf, "action": "x" * 17}),
            await client.post(base, data={"csrf": csrf, "key": "k" * 65}),
            await client.post(base, data={"csrf": csrf, "key": "ok", "name": "n" * 201}),
            await client.post(base, data={"csrf": csrf, "key": "ok", "name": "n" * 17_000}),
        ]
        listing = await client.get(base)
    assert [a.status_code for a in answers] == [413, 422, 422, 422, 422, 422, 422, 413]
    assert await _stored(services, tenant) == FIRST
    assert "ok" not in [r.key for r in (await services.layouts.page(tenant.tenant_id, 9, None))[0]]
    assert listing.status_code == 200


@pytest.mark.parametrize("name", CHOSEN)
async def test_hostile_jinja_in_a_layout_is_refused_beside_the_html(
    services: Services, tenant: TenantClient, name: str
) -> None:
    path = await _drafted(services, tenant)
    hostile = "{{ content }}" + HOSTILE[name]
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        form = {"csrf": csrf, "action": "preview", "html": hostile, "data": '{"x": ["a"]}'}
        refused = await client.post(path, data=form)
        fine = {"csrf": csrf, "action": "preview", "html": "<main>{{ content }}</main>"}
        after = await client.post(path, data=fine)
    assert refused.status_code == 422, refused.text[:300]
    error = _error(refused.text, "html")
    assert error, name
    if name == "nested range":
        assert "did not render within" in error
    assert "root:" not in refused.text and "environ" not in error
    assert _textarea(refused.text) == hostile, "what was typed is kept"
    assert 'sandbox srcdoc="' not in refused.text
    assert after.status_code == 200 and "A sample heading" in html.unescape(after.text)


async def test_markup_is_text_and_the_preview_stays_in_its_frame(
    services: Services, tenant: TenantClient
) -> None:
    path = await _drafted(services, tenant)
    base = f"/t/{tenant.tenant_id}/layouts"
    typed = "</textarea><script>alert(1)</script>{{ content }}<img src=x onerror=alert(2)>"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        named = await client.post(base, data={"csrf": csrf, "key": "x", "name": "<b>bold</b>"})
        listing = await client.get(base)
        preview = await client.post(path, data={"csrf": csrf, "action": "preview", "html": typed})
    assert named.status_code == 303
    assert "<b>bold</b>" not in listing.text and "&lt;b&gt;bold&lt;/b&gt;" in listing.text
    assert preview.status_code == 200
    outside = preview.text[: preview.text.find("srcdoc=")]
    assert "<script>" not in preview.text and "&lt;/textarea&gt;&lt;script&gt;" in outside
    assert "<img src=x" not in preview.text
    policy = preview.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy


async def test_another_tenants_layout_and_bad_urls_are_refused(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    await _drafted(services, tenant)
    theirs = await services.layouts.get(tenant.tenant_id, "brand")
    mallory = await make_tenant(services, api, "mallory")
    await add_user(services, "eve@example.com", mallory.tenant_id, Role.OWNER)
    mine = f"/t/{mallory.tenant_id}/layouts"
    async with browser(services) as client:
        csrf = await sign_in(client, "eve@example.com")
        by_id = [
            await client.get(f"{mine}/{theirs.id}"),
            await client.get(f"{mine}/{theirs.id}/versions/1"),
            await client.post(f"{mine}/{theirs.id}/versions", data={"csrf": csrf}),
            await client.post(
                f"{mine}/{theirs.id}/versions/1",
                data={"csrf": csrf, "action": "publish", "html": "{{ content }}"},
            ),
        ]
        await client.post(mine, data={"csrf": csrf, "key": "own"})
        bad = [
            await client.get(f"{mine}/own/versions/{number}")
            for number in ("0", "-1", "1000001", "abc", "1.5", "9" * 30)
        ]
        long_ref = await client.get(f"{mine}/{'r' * 65}")
        missing = await client.get(f"{mine}/own/versions/999")
    assert [a.status_code for a in by_id] == [404] * 4
    assert [b.status_code for b in bad] == [422] * 6
    assert (long_ref.status_code, missing.status_code) == (422, 404)
    assert await _stored(services, tenant) == FIRST
