"""Hostile email layouts: the runaway and attribute-walk attacks of the hostile
templates, written into a layout, are refused with 422 ``template_error`` within the
one render's time budget (template and layout share it) while the event loop keeps
serving; a layout cannot reach a template or itself (no loader, no re-rendering of
the content), data cannot inject markup through it, and the API bounds a layout's
size, its placeholder and how many layouts a tenant holds; another tenant's layout
is 404 and a send naming it is 422.

The render-pool tests share one pool (and its event loop) for the module: starting one
spawns its workers, seconds each; a runaway render still has its worker killed and a
fresh one started, which the next render of the test waits for (the layout after each
attack renders), so every test starts on a whole pool."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from homing.rendering import Limits, RenderPool, TemplateError
from homing.services import Services
from homing.settings import Settings
from tests.adversary.test_hostile_templates import BUDGET, HOSTILE, SLACK, _ticker
from tests.conftest import TenantClient, make_tenant
from tests.fixtures import settings_for

EMAIL = {"email": {"subject": "s", "html": "<p>{{ name }}</p>"}}


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    """A tenant that can send: an email and an SMS provider stored (a send no provider
    could deliver is refused at accept)."""
    return await make_tenant(services, api, "acme", provider=True)


# The tests on the shared pool run on the module's event loop, as the pool does.
ON_THE_POOLS_LOOP = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool() -> AsyncIterator[RenderPool]:
    p = RenderPool(size=2, memory_bytes=512 * 1024 * 1024, limits=Limits(timeout_s=BUDGET))
    await p.start()
    yield p
    await p.close()


@ON_THE_POOLS_LOOP
@pytest.mark.parametrize("name", sorted(HOSTILE))
async def test_a_hostile_layout_is_refused_within_the_budget(pool: RenderPool, name: str) -> None:
    stop, gaps = asyncio.Event(), list[float]()
    ticker = asyncio.create_task(_ticker(stop, gaps))
    started = time.monotonic()
    # A key of its own: a worker caches a layout's compiled HTML under its key.
    layout = (f"hostile {name}:0", "{{ content }}" + HOSTILE[name])
    with pytest.raises(TemplateError) as err:
        await pool.render(None, EMAIL, None, {"name": "n", "x": ["a"]}, ["email"], layout)
    took = time.monotonic() - started
    stop.set()
    await ticker
    assert err.value.code == "template_error"
    assert took < BUDGET + SLACK, f"{name}: answered after {took:.2f}s"
    assert max(gaps, default=0) < 0.5, f"{name}: the event loop stalled {max(gaps):.2f}s"
    assert "root:" not in err.value.message and "environ" not in str(err.value.details)
    ok = await pool.render(
        None, EMAIL, None, {"name": "fine"}, ["email"], ("ok:0", "{{ content }}")
    )
    assert "<p>fine</p>" in ok["email"]["html"]


@ON_THE_POOLS_LOOP
async def test_the_content_is_never_rendered_again_nor_escaped_twice(pool: RenderPool) -> None:
    # Text that looks like a template, from the data or from the template's own output,
    # is shown as text: the layout prints the content once, it never evaluates it.
    parts = {
        "email": {
            "subject": "s",
            "html": "<p>{{ name }}</p>{% raw %}{{ content }}{{ 7 * 7 }}{% endraw %}",
        }
    }
    data = {"name": "{{ content }} <script>x</script> & {{ 6 * 7 }}", "content": "<b>mine</b>"}
    out = await pool.render(None, parts, None, data, ["email"], ("l:0", "<div>{{ content }}</div>"))
    html = out["email"]["html"]
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert "{{ content }}{{ 7 * 7 }}" in html and "49" not in html and "42" not in html
    # The data's own "content" cannot replace the email's HTML in the layout.
    assert "<b>mine</b>" not in html and "&amp;amp;" not in html


@ON_THE_POOLS_LOOP
async def test_a_layout_cannot_include_a_template_or_itself(pool: RenderPool) -> None:
    for key, source in (
        ("inc:0", "{% include 'welcome' %}{{ content }}"),
        ("ext:0", "{% extends 'brand' %}{{ content }}"),
    ):
        with pytest.raises(TemplateError):
            await pool.render(None, EMAIL, None, {"name": "n"}, ["email"], (key, source))


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        layout_max_layouts=2,
        layout_max_source_chars=2048,
        template_render_workers=1,
    )


async def test_layout_bounds_and_another_tenants_layout(
    services: Services, api: httpx.AsyncClient
) -> None:
    acme = await make_tenant(services, api, "acme", provider=True)
    mallory = await make_tenant(services, api, "mallory", provider=True)
    for key in ("one", "two"):
        assert (await acme.post("/v1/layouts", json={"key": key})).status_code == 201
    full = await acme.post("/v1/layouts", json={"key": "three"})
    assert full.status_code == 409 and full.json()["error"]["code"] == "conflict"
    big = await acme.post("/v1/layouts/one/versions", json={"html": "{{ content }}" + "x" * 2048})
    assert big.status_code == 422 and big.json()["error"]["code"] == "template_error"
    for html in ("<p>no placeholder</p>", "{{ contents }}", "{# {{ content }} #}"):
        refused = await acme.post("/v1/layouts/one/versions", json={"html": html})
        assert refused.status_code == 422, html
    await _publish_layout(acme, "one", "<div>SECRET {{ content }}</div>")
    # Mallory can see, change and use none of it, by id or key.
    layout_id = (await acme.get("/v1/layouts/one")).json()["id"]
    for ref in ("one", layout_id):
        assert (await mallory.get(f"/v1/layouts/{ref}")).status_code == 404
        assert (await mallory.get(f"/v1/layouts/{ref}/versions")).status_code == 404
        assert (await mallory.delete(f"/v1/layouts/{ref}")).status_code == 404
    await mallory.post("/v1/templates", json={"key": "t"})
    v = await mallory.post(
        "/v1/templates/t/versions", json={"email": {"subject": "s", "html": "x", "layout": "one"}}
    )
    await mallory.post(f"/v1/templates/t/versions/{v.json()['id']}/publish")
    preview = await mallory.post("/v1/templates/t/preview", json={"data": {}})
    assert preview.status_code == 422 and "SECRET" not in preview.text


async def _publish_layout(tenant: TenantClient, key: str, html: str) -> None:
    version = await tenant.post(f"/v1/layouts/{key}/versions", json={"html": html})
    assert version.status_code == 201, version.text
    vid = version.json()["id"]
    assert (await tenant.post(f"/v1/layouts/{key}/versions/{vid}/publish")).status_code == 200
