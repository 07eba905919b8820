"""A hostile person at the console's template pages: another tenant's templates are
404 on every page and action (and never show), a viewer and a forged CSRF token change
nothing, the editor's form and fields are bounded, markup typed into a template is
shown as text (and its preview only inside the sandboxed frame, under its own CSP), a
diff of huge versions is refused rather than computed, and a test send to a header
injection is refused beside its field."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from homing.console import template_pages
from homing.domain.job_search import JobFilter
from homing.models import Role
from homing.services import Services
from tests.conftest import TenantClient, make_tenant
from tests.console_helpers import add_user, browser, sign_in

SECRET = "only-acme-knows-this"


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    """A tenant that can send: an email and an SMS provider stored (a send no provider
    could deliver is refused at accept)."""
    return await make_tenant(services, api, "acme", provider=True)


async def _template(tenant: TenantClient, key: str, **content: object) -> str:
    assert (await tenant.post("/v1/templates", json={"key": key})).status_code == 201
    version = await tenant.post(f"/v1/templates/{key}/versions", json=content)
    assert version.status_code == 201, version.text
    return str(version.json()["id"])


async def test_another_tenants_templates_are_404_everywhere_and_unchanged(
    services: Services, api: httpx.AsyncClient
) -> None:
    acme = await make_tenant(services, api, "acme", provider=True)
    mallory = await make_tenant(services, api, "mallory", provider=True)
    await _template(acme, "secret", email={"subject": SECRET, "text": SECRET})
    await add_user(services, "eve@example.com", mallory.tenant_id, Role.OWNER)
    theirs = f"/t/{acme.tenant_id}/templates"
    mine = f"/t/{mallory.tenant_id}/templates"
    async with browser(services) as client:
        csrf = await sign_in(client, "eve@example.com")
        form = {"csrf": csrf, "action": "publish", "email_subject": "pwned", "key": "x"}
        answers = [
            await client.get(theirs),
            await client.get(f"{theirs}/secret"),
            await client.get(f"{theirs}/secret/versions/1"),
            await client.post(theirs, data=form),
            await client.post(f"{theirs}/secret/versions", data=form),
            await client.post(f"{theirs}/secret/versions/1", data=form),
            # Their key through my own tenant's pages: no such template of mine.
            await client.get(f"{mine}/secret"),
            await client.post(f"{mine}/secret/versions/1", data=form),
        ]
    assert [a.status_code for a in answers] == [404] * 8
    assert all(SECRET not in a.text for a in answers)
    template = await services.templates.get(acme.tenant_id, "secret")
    [version], _ = await services.templates.versions(template, 10, None)
    assert (version.state, version.parts["email"]["subject"]) == ("draft", SECRET)


async def test_a_viewer_and_a_forged_token_change_nothing(
    services: Services, tenant: TenantClient
) -> None:
    await _template(tenant, "welcome", email={"subject": "v1", "text": "t"})
    await add_user(services, "viewer@example.com", tenant.tenant_id, Role.VIEWER)
    await add_user(services, "owner@example.com", tenant.tenant_id, Role.OWNER)
    path = f"/t/{tenant.tenant_id}/templates/welcome/versions/1"
    async with browser(services) as viewer, browser(services) as owner:
        csrf = await sign_in(viewer, "viewer@example.com")
        await sign_in(owner, "owner@example.com")
        page = await viewer.get(path)
        by_viewer = await viewer.post(path, data={"csrf": csrf, "email_subject": "changed"})
        forged = await owner.post(path, data={"csrf": "0" * 43, "email_subject": "changed"})
        publish = await viewer.post(path, data={"csrf": csrf, "action": "publish"})
    assert page.status_code == 200 and "Save draft" not in page.text and "readonly" in page.text
    assert [by_viewer.status_code, forged.status_code, publish.status_code] == [403] * 3
    template = await services.templates.get(tenant.tenant_id, "welcome")
    version = await services.templates.version(template, 1)
    assert (version.state, version.parts["email"]["subject"]) == ("draft", "v1")


async def test_the_editor_is_bounded_and_shows_markup_as_text(
    services: Services, tenant: TenantClient
) -> None:
    await _template(tenant, "welcome", email={"subject": "s", "text": "t"})
    await add_user(services, "owner@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/templates"
    path = f"{base}/welcome/versions/1"
    async with browser(services) as client:
        csrf = await sign_in(client, "owner@example.com")
        huge = await client.post(path, data={"csrf": csrf, "email_html": "x" * 1_100_000})
        long_field = await client.post(path, data={"csrf": csrf, "data": "{" * 70_000})
        hostile = "<script>alert(1)</script>"
        typed = {"csrf": csrf, "action": "preview", "email_subject": hostile}
        typed |= {"email_html": f"<p>{{{{ x }}}}</p>{hostile}", "data": '{"x": "<img src=x>"}'}
        preview = await client.post(path, data=typed)
        bad_name = await client.post(base, data={"csrf": csrf, "key": "ok", "name": hostile})
        listing = await client.get(base)
    assert huge.status_code == 413
    assert long_field.status_code == 422
    assert preview.status_code == 200
    # Outside the frame every typed string is text; the frame's document is an escaped
    # attribute, and the page allows the frame no script.
    outside = preview.text.replace(preview.text[preview.text.find("srcdoc=") :], "")
    assert "<script>" not in outside and "&lt;script&gt;" in outside
    assert "<img src=x>" not in preview.text
    assert "script-src 'self'" in preview.headers["content-security-policy"]
    assert "default-src &#39;none&#39;" in preview.text or "default-src 'none'" in preview.text
    assert bad_name.status_code == 303
    assert "<script>alert" not in listing.text and "&lt;script&gt;" in listing.text


async def test_a_diff_of_huge_versions_is_refused_unread_and_is_escaped(
    services: Services, tenant: TenantClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # difflib is not linear: the bound holds when versions over it never reach it (a
    # count of its calls, not a stopwatch, which a loaded machine would break).
    compared: list[int] = []
    unified_diff = template_pages.difflib.unified_diff

    def counted(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
        compared.append(max(len(a), len(b)))
        return unified_diff(a, b, *args, **kwargs)

    monkeypatch.setattr(template_pages.difflib, "unified_diff", counted)
    many = "\n".join(f"line {n}" for n in range(3000))
    await _template(tenant, "big", email={"subject": "s", "text": many})
    await tenant.post("/v1/templates/big/versions", json={"email": {"subject": "s", "text": "x"}})
    await _template(tenant, "small", email={"subject": "<b>a</b>", "text": "t"})
    small = {"email": {"subject": "<b>b</b>", "text": "t"}}
    await tenant.post("/v1/templates/small/versions", json=small)
    await add_user(services, "owner@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/templates"
    async with browser(services) as client:
        await sign_in(client, "owner@example.com")
        big = await client.get(f"{base}/big", params={"a": 1, "b": 2})
        assert compared == []
        diff = await client.get(f"{base}/small", params={"a": 1, "b": 2})
        absurd = await client.get(f"{base}/small", params={"a": 10**9, "b": 1})
    assert big.status_code == 200 and "too long to compare" in big.text
    assert compared and max(compared) <= template_pages.MAX_DIFF_LINES
    assert "-&lt;b&gt;a&lt;/b&gt;" in diff.text and "+&lt;b&gt;b&lt;/b&gt;" in diff.text
    assert absurd.status_code == 422


async def test_a_test_send_to_a_header_injection_is_refused_beside_its_field(
    services: Services, tenant: TenantClient
) -> None:
    await _template(tenant, "welcome", email={"subject": "s", "text": "t"})
    await add_user(services, "owner@example.com", tenant.tenant_id, Role.OWNER)
    path = f"/t/{tenant.tenant_id}/templates/welcome/versions/1"
    async with browser(services) as client:
        csrf = await sign_in(client, "owner@example.com")
        form = {"csrf": csrf, "action": "send", "email_subject": "s", "email_text": "t"}
        form |= {"to": "a@example.com\r\nBcc: all@example.com", "from": "hello@acme.example"}
        refused = await client.post(path, data=form)
    assert refused.status_code == 422
    assert 'id="to-error"' in refused.text
    assert "Bcc: all@example.com" in refused.text  # what was typed is kept, as text
    assert not (await services.jobs.page(JobFilter(tenant_id=tenant.tenant_id))).jobs
