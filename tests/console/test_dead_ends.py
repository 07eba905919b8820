"""No dead ends in the console: a refused form shows the same form again, the error
beside its field and what was typed kept (never the generic "Not understood … Back to
the start" page); an unknown console URL answers an HTML 404 page with the navigation,
while unknown API URLs (and paths outside the console's prefixes) keep JSON."""

from __future__ import annotations

import html
import re

import httpx

from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient
from tests.console_helpers import add_user, browser, sign_in
from tests.dead_letter_helpers import dead_letter
from tests.e2e.conftest import register

GENERIC = "Back to the start"


def field_error(page: str, field_id: str) -> str:
    """The inline error shown beside the field ``field_id`` (asserted there)."""
    found = re.search(rf'id="{field_id}-error" role="alert">(.*?)</span>', page, re.S)
    assert found, f"no error beside {field_id}"
    return html.unescape(found.group(1))


def value_of(page: str, field_id: str) -> str:
    """The value the input ``field_id`` carries."""
    found = re.search(rf'<input id="{field_id}"[^>]*value="([^"]*)"', page)
    assert found, f"no input {field_id} with a value"
    return html.unescape(found.group(1))


async def test_an_invalid_domain_shows_the_form_again_with_the_error_and_the_name(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    account = await register(tenant, sandbox, "resend", 1)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        typed = "not a domain!"
        refused = await client.post(
            f"/t/{tenant.tenant_id}/domains",
            data={"csrf": csrf, "domain": typed, "provider_account_id": account["id"]},
        )
    assert refused.status_code == 422
    assert GENERIC not in refused.text
    assert "Not a domain name" in field_error(refused.text, "domain")
    assert value_of(refused.text, "domain") == typed
    assert f'<option value="{account["id"]}" selected>' in refused.text
    assert await services.domains.all(tenant.tenant_id) == []


async def test_a_blank_api_key_name_shows_the_form_again_with_the_error(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        refused = await client.post(
            f"/t/{tenant.tenant_id}/api-keys", data={"csrf": csrf, "name": "   "}
        )
        too_long = await client.post(
            f"/t/{tenant.tenant_id}/api-keys", data={"csrf": csrf, "name": "k" * 201}
        )
    assert refused.status_code == 422 and GENERIC not in refused.text
    assert "Name the key" in field_error(refused.text, "name")
    assert value_of(refused.text, "name") == "   "
    assert too_long.status_code == 422 and GENERIC not in too_long.text
    assert "At most 200 characters" in field_error(too_long.text, "name")
    assert value_of(too_long.text, "name") == "k" * 201
    assert len(await services.keys.live(tenant.tenant_id)) == 1


async def test_a_bad_suppression_address_keeps_what_was_typed(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        refused = await client.post(
            f"/t/{tenant.tenant_id}/suppressions",
            data={"csrf": csrf, "channel": "sms", "address": "call me", "reason": "manual"},
        )
    assert refused.status_code == 422 and GENERIC not in refused.text
    assert field_error(refused.text, "add-address").startswith("Address to suppress:")
    assert value_of(refused.text, "add-address") == "call me"
    assert '<option value="sms" selected>' in refused.text


async def test_an_operator_redrive_without_a_filter_asks_for_one_beside_the_box(
    services: Services, tenant: TenantClient
) -> None:
    await dead_letter(services, tenant)
    await add_user(services, "op@example.com", operator=True)
    async with browser(services) as client:
        csrf = await sign_in(client, "op@example.com")
        refused = await client.post(
            "/operator/dead-letters/redrive", data={"csrf": csrf, "dry_run": "1"}
        )
        counted = await client.post(
            "/operator/dead-letters/redrive",
            data={"csrf": csrf, "dry_run": "1", "all": "1"},
            follow_redirects=True,
        )
    assert refused.status_code == 422 and GENERIC not in refused.text
    assert "Narrow the dead letters first" in field_error(refused.text, "all")
    assert 'class="dead-letter"' in refused.text  # the list is still there
    assert "1 dead letter would be redriven" in counted.text


async def test_an_unknown_console_url_is_an_html_page_with_the_navigation(
    services: Services, tenant: TenantClient, api: httpx.AsyncClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.VIEWER)
    async with browser(services) as client:
        await sign_in(client, "ada@example.com")
        page = await client.get(f"/t/{tenant.tenant_id}/no-such-page")
        operator = await client.get("/operator/nothing-here")
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert "Content-Security-Policy" in page.headers
    assert 'data-code="not_found"' in page.text
    assert f'<a href="/t/{tenant.tenant_id}/messages"' in page.text  # the navigation
    assert "no-such-page" not in page.text
    assert operator.status_code == 404 and operator.headers["content-type"].startswith("text/")
    signed_out = await api.get(f"/t/{tenant.tenant_id}/nothing")
    assert signed_out.status_code == 404 and "<h1>Not found</h1>" in signed_out.text


async def test_unknown_api_urls_and_others_keep_json_problem_details(
    api: httpx.AsyncClient,
) -> None:
    for path in ("/v1/no-such-thing", "/admin/v1/nothing", "/feed/x"):
        answer = await api.get(path)
        assert answer.status_code in (401, 404), path
        assert answer.headers["content-type"] == "application/json", path
        assert "error" in answer.json(), path
