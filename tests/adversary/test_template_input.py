"""A hostile tenant against the template API and templated sends: another tenant's
template by id or key is 404 everywhere (422 at a send), and never shows its content;
floods of keys, names, locales, templates, versions and data are refused at their
bounds; a runaway template sent through the API is 422 within the budget
while the API keeps answering."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest

from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant
from tests.fixtures import settings_for

SECRET = "only-acme-knows-this"


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    """A tenant that can send: an email and an SMS provider stored (a send no provider
    could deliver is refused at accept)."""
    return await make_tenant(services, api, "acme", provider=True)


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        template_max_templates=3,
        template_max_versions=3,
        template_max_data_bytes=1024,
        template_render_timeout_seconds=1.0,
        template_render_workers=1,
    )


async def _published(tenant: TenantClient, key: str, **content: object) -> dict[str, str]:
    created = (await tenant.post("/v1/templates", json={"key": key})).json()
    version = await tenant.post(f"/v1/templates/{key}/versions", json=content)
    assert version.status_code == 201, version.text
    vid = version.json()["id"]
    assert (await tenant.post(f"/v1/templates/{key}/versions/{vid}/publish")).status_code == 200
    return {"id": created["id"], "version": vid}


async def test_another_tenants_template_is_404_by_id_and_key_and_its_content_never_shows(
    services: Services, api: httpx.AsyncClient
) -> None:
    acme = await make_tenant(services, api, "acme", provider=True)
    mallory = await make_tenant(services, api, "mallory", provider=True)
    theirs = await _published(acme, "secret", email={"subject": SECRET, "text": SECRET})
    for ref in (theirs["id"], "secret"):
        base = f"/v1/templates/{ref}"
        vid = theirs["version"]
        answers = [
            await mallory.get(base),
            await mallory.get(f"{base}/versions"),
            await mallory.get(f"{base}/versions/{vid}"),
            await mallory.patch(f"{base}/versions/{vid}", json={"sms": {"body": "x"}}),
            await mallory.post(f"{base}/versions/{vid}/publish"),
            await mallory.post(f"{base}/versions", json={"sms": {"body": "x"}}),
            await mallory.post(f"{base}/preview", json={"data": {}}),
            await mallory.delete(base),
        ]
        for response in answers:
            assert response.status_code == 404, (ref, response.request.url, response.text)
            assert SECRET not in response.text
        send = await mallory.post(
            "/v1/notifications/email",
            json={"to": "a@b.co", "from": "c@d.co", "template": ref, "data": {}},
        )
        assert send.status_code == 422 and send.json()["error"]["code"] == "template_error"
        assert SECRET not in send.text
    listed = (await mallory.get("/v1/templates")).json()
    assert listed["data"] == []
    # Mallory may use the same key for a template of her own: keys are per tenant.
    assert (await mallory.post("/v1/templates", json={"key": "secret"})).status_code == 201
    still = (await acme.get("/v1/templates/secret/versions")).json()["data"]
    assert still[0]["email"]["subject"] == SECRET


@pytest.mark.parametrize(
    "body",
    [
        {"key": "x" * 65},
        {"key": "Has Spaces"},
        {"key": "-leading"},
        {"key": "a/../b"},
        {"key": "0b7a6c9e-2f7a-4b8a-9c1d-3e5f7a9b1c2d"},  # the shape of an id
        {"key": "ok", "name": "n" * 201},
        {"key": "ok", "default_locale": "a-" * 20_000},
        {"key": "ok", "default_locale": "not a locale"},
        {"key": "ok", "default_locale": "en-" + "x" * 30},
        {"key": "ok", "extra": 1},
    ],
)
async def test_keys_names_and_locales_out_of_shape_are_refused(
    tenant: TenantClient, body: dict[str, object]
) -> None:
    # Each is bounded in length before any pattern runs (and the patterns are linear).
    response = await tenant.post("/v1/templates", json=body)
    assert response.status_code == 422, response.text
    assert (await tenant.get("/v1/templates")).json()["data"] == []


async def test_templates_versions_and_data_stop_at_their_bounds(tenant: TenantClient) -> None:
    for n in range(3):
        assert (await tenant.post("/v1/templates", json={"key": f"t{n}"})).status_code == 201
    refused = await tenant.post("/v1/templates", json={"key": "t3"})
    assert refused.status_code == 409 and refused.json()["error"]["details"]["limit"] == 3
    assert (await tenant.post("/v1/templates", json={"key": "t0"})).status_code == 409
    for _ in range(3):
        added = await tenant.post("/v1/templates/t0/versions", json={"sms": {"body": "x"}})
        assert added.status_code == 201
    more = await tenant.post("/v1/templates/t0/versions", json={"sms": {"body": "x"}})
    assert more.status_code == 409 and more.json()["error"]["details"]["limit"] == 3
    # Data past HOMING_TEMPLATE_MAX_DATA_BYTES is refused before any render.
    big = {"data": {"x": "y" * 2000}, "version": 1}
    response = await tenant.post("/v1/templates/t0/preview", json=big)
    assert response.status_code == 422 and response.json()["error"]["code"] == "template_error"
    deep: object = "x"
    for _ in range(400):
        deep = {"a": deep}
    response = await tenant.post("/v1/templates/t0/preview", json={"data": deep, "version": 1})
    assert response.status_code == 422


async def test_content_that_cannot_render_is_refused_when_written_not_at_send(
    tenant: TenantClient,
) -> None:
    await tenant.post("/v1/templates", json={"key": "t"})
    for content in (
        {"email": {"subject": "{% for %}", "text": "t"}},
        {"email": {"subject": "only a subject"}},
        {"sms": {"body": "x" * 70_000}},
        {"chat": {"text": "x", "format": "bbcode"}},
        {"variables": {"type": "no such type"}, "sms": {"body": "x"}},
        {},
    ):
        response = await tenant.post("/v1/templates/t/versions", json=content)
        assert response.status_code == 422, (content, response.text)


async def test_a_runaway_template_sent_is_422_within_the_budget_while_healthz_answers(
    services: Services, tenant: TenantClient, api: httpx.AsyncClient
) -> None:
    await services.render_pool.start()  # its workers' start-up is not the attack's
    loop = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
    await _published(tenant, "spin", email={"subject": "s", "text": loop})
    send = asyncio.ensure_future(
        tenant.post(
            "/v1/notifications/email",
            json={"to": "a@b.co", "from": "c@d.co", "template": "spin", "data": {}},
        )
    )
    started = time.monotonic()
    await asyncio.sleep(0.2)
    health = await api.get("/healthz")
    assert health.status_code == 200 and not send.done()
    response = await send
    assert response.status_code == 422 and response.json()["error"]["code"] == "template_error"
    assert time.monotonic() - started < 1.0 + 2.0


async def test_a_batch_of_a_runaway_template_holds_the_pool_for_one_budget_not_one_per_item(
    services: Services, tenant: TenantClient
) -> None:
    await services.render_pool.start()
    loop = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
    await _published(tenant, "spin", email={"subject": "s", "text": loop})
    item = {"to": "a@b.co", "from": "c@d.co", "template": "spin", "data": {}}
    started = time.monotonic()
    response = await tenant.post("/v1/notifications/email/batch", json={"messages": [item] * 20})
    elapsed = time.monotonic() - started
    assert response.status_code == 202, response.text
    answer = response.json()
    assert answer["rejected"] == 20
    assert {r["error"]["code"] for r in answer["results"]} == {"template_error"}
    # One worker, a 1 s budget: the first item spends it, the other 19 are refused
    # without rendering (20 s otherwise).
    assert elapsed < 1.0 + 3.0, elapsed


def _nested_schema(depth: int) -> dict[str, object]:
    schema: dict[str, object] = {"type": "string"}
    for _ in range(depth):
        schema = {"not": schema}
    return schema


@pytest.mark.parametrize(
    "content",
    [
        # 0.6-2.4 KB of nesting: each used to reach the recursion limit (500).
        {"sms": {"body": "{{ " + "(" * 300 + "1" + ")" * 300 + " }}"}},
        {"sms": {"body": "{{ " + "[" * 300 + "1" + "]" * 300 + " }}"}},
        {"sms": {"body": "{% if 1 %}" * 120 + "x" + "{% endif %}" * 120}},
        {"sms": {"body": "{{ a" + "+a" * 600 + " }}"}},
        {"sms": {"body": "x"}, "variables": _nested_schema(300)},
        {"sms": {"body": "x"}, "variables": {"properties": {"a": _nested_schema(150)}}},
    ],
    ids=["parentheses", "lists", "blocks", "operators", "schema", "schema-in-properties"],
)
async def test_nested_template_or_schema_is_a_template_error_naming_it(
    tenant: TenantClient, content: dict[str, object]
) -> None:
    await tenant.post("/v1/templates", json={"key": "t"})
    response = await tenant.post("/v1/templates/t/versions", json=content)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "template_error"
    assert "nested too deeply" in error["message"], error
    where = "variables" if "variables" in content else "sms.body"
    assert where in error["message"], error


async def test_a_nested_layout_is_a_template_error_naming_it(tenant: TenantClient) -> None:
    await tenant.post("/v1/layouts", json={"key": "brand"})
    html = "{{ content }}{{ " + "(" * 300 + "1" + ")" * 300 + " }}"
    response = await tenant.post("/v1/layouts/brand/versions", json={"html": html})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "template_error"
    assert "layout.html" in response.json()["error"]["message"]
