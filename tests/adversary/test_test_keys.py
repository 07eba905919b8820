"""A test key (``hk_test_…``) touches test state only: it sends (to the sandbox), reads
what shows no secret, and reads or retries its own test jobs. Everything that changes
the tenant's configuration or touches live jobs is 403 ``forbidden`` with a message
saying a live key is needed. The route table is walked, so no ``/v1`` route escapes."""

from __future__ import annotations

import re
from typing import Any

import httpx
from fastapi.routing import APIRoute, iter_route_contexts

from homing.api.app import create_app
from homing.services import Services
from tests.admission_helpers import EMAIL, send_email
from tests.conftest import TenantClient, disable_providers, stored_provider

# What a test key may call: sending, its own jobs, reads that show no secret.
TEST_KEY_ROUTES = {
    ("POST", "/v1/notifications/email"),
    ("POST", "/v1/notifications/email/batch"),
    ("POST", "/v1/notifications/webhook"),
    ("POST", "/v1/notifications/sms"),
    ("POST", "/v1/notifications/sms/batch"),
    ("POST", "/v1/notifications/chat"),
    ("GET", "/v1/jobs"),
    ("GET", "/v1/jobs/{job_id}"),
    ("POST", "/v1/jobs/{job_id}/retry"),
    ("POST", "/v1/jobs/{job_id}/cancel"),
    ("PATCH", "/v1/jobs/{job_id}"),
    ("GET", "/v1/usage"),
    ("GET", "/v1/reports/events"),
    ("GET", "/v1/suppressions"),
    ("GET", "/v1/domains"),
    ("GET", "/v1/domains/{domain_id}"),
    ("GET", "/v1/providers"),
    ("GET", "/v1/providers/{provider_id}/inbound"),
    ("GET", "/v1/webhook-secret"),
    ("GET", "/v1/webhook-endpoints/gone"),
    ("GET", "/v1/settings"),
}
# What needs a live key: configuration, secrets, API keys.
LIVE_KEY_ROUTES = {
    # Recipients hold personal data and are live state (docs/recipients.md).
    ("PUT", "/v1/recipients/{external_id}"),
    ("GET", "/v1/recipients"),
    ("GET", "/v1/recipients/{external_id}"),
    ("DELETE", "/v1/recipients/{external_id}"),
    ("GET", "/v1/recipients/{external_id}/preferences"),
    ("PATCH", "/v1/recipients/{external_id}/preferences"),
    ("GET", "/v1/recipients/{external_id}/preference-link"),
    ("POST", "/v1/erasure"),
    ("PUT", "/v1/categories/{key}"),
    ("GET", "/v1/categories"),
    ("GET", "/v1/categories/{key}"),
    # The in-app feed writes to and reads a real person's feed: live state (docs/feed.md).
    ("POST", "/v1/notifications/in-app"),
    # A multi-channel notification may have an in-app step: live-only like it.
    ("POST", "/v1/notifications"),
    ("GET", "/v1/notifications/{notification_id}"),
    ("GET", "/v1/recipients/{external_id}/feed"),
    ("GET", "/v1/recipients/{external_id}/feed-token"),
    ("POST", "/v1/feed-secret/rotate"),
    ("GET", "/v1/feed-origins"),
    ("PUT", "/v1/feed-origins"),
    ("POST", "/v1/api-keys"),
    ("GET", "/v1/api-keys"),
    ("DELETE", "/v1/api-keys/{key_id}"),
    ("POST", "/v1/providers"),
    ("PATCH", "/v1/providers/{provider_id}"),
    ("DELETE", "/v1/providers/{provider_id}"),
    ("PUT", "/v1/providers/{provider_id}/inbound"),
    ("DELETE", "/v1/providers/{provider_id}/inbound"),
    ("POST", "/v1/domains"),
    ("POST", "/v1/domains/{domain_id}/verify"),
    ("DELETE", "/v1/domains/{domain_id}"),
    ("POST", "/v1/suppressions"),
    ("DELETE", "/v1/suppressions"),
    ("POST", "/v1/webhook-secret"),
    ("POST", "/v1/webhook-secret/rotate"),
    ("DELETE", "/v1/webhook-secret"),
    ("POST", "/v1/webhook-endpoints/enable"),
    ("PATCH", "/v1/settings"),
    # Dead letters are live data: a test key is refused.
    ("GET", "/v1/dead-letters"),
    ("GET", "/v1/dead-letters/{dead_letter_id}"),
    ("POST", "/v1/dead-letters/redrive"),
    ("POST", "/v1/dead-letters/purge"),
    # The audit log names live keys and live changes: a test key is refused.
    ("GET", "/v1/audit-log"),
    # Templates are configuration (a test key may send with one, not read or change it).
    ("POST", "/v1/templates"),
    ("GET", "/v1/templates"),
    ("GET", "/v1/templates/{ref}"),
    ("DELETE", "/v1/templates/{ref}"),
    ("POST", "/v1/templates/{ref}/versions"),
    ("GET", "/v1/templates/{ref}/versions"),
    ("GET", "/v1/templates/{ref}/versions/{version_id}"),
    ("PATCH", "/v1/templates/{ref}/versions/{version_id}"),
    ("POST", "/v1/templates/{ref}/versions/{version_id}/publish"),
    ("POST", "/v1/templates/{ref}/preview"),
    # Email layouts are configuration too.
    ("POST", "/v1/layouts"),
    ("GET", "/v1/layouts"),
    ("GET", "/v1/layouts/{ref}"),
    ("DELETE", "/v1/layouts/{ref}"),
    ("POST", "/v1/layouts/{ref}/versions"),
    ("GET", "/v1/layouts/{ref}/versions"),
    ("GET", "/v1/layouts/{ref}/versions/{version_id}"),
    ("PATCH", "/v1/layouts/{ref}/versions/{version_id}"),
    ("POST", "/v1/layouts/{ref}/versions/{version_id}/publish"),
}
SOME_ID = "0194d1c0-0000-7000-8000-000000000000"


async def _test_key(tenant: TenantClient) -> TenantClient:
    issued = await tenant.post("/v1/api-keys", json={"name": "ci", "test": True})
    assert issued.status_code == 201, issued.text
    return TenantClient(tenant.api, tenant.tenant_id, issued.json()["key"])


def _v1_routes(services: Services) -> set[tuple[str, str]]:
    """Every (method, path) the app routes under ``/v1/``, routers included."""
    found: set[tuple[str, str]] = set()
    for route in iter_route_contexts(create_app(services).routes):
        path, methods = route.path, route.methods
        if isinstance(route.original_route, APIRoute) and path and path.startswith("/v1/"):
            found |= {(method, path) for method in methods or ()}
    return found


def _assert_needs_live_key(response: httpx.Response, what: str) -> None:
    assert response.status_code == 403, f"{what}: {response.status_code} {response.text}"
    error = response.json()["error"]
    assert error["code"] == "forbidden", what
    assert "live" in error["message"], what


async def test_every_v1_route_is_classified(services: Services) -> None:
    routes = _v1_routes(services)
    unclassified = routes - TEST_KEY_ROUTES - LIVE_KEY_ROUTES
    assert not unclassified, f"classify these for test keys: {sorted(unclassified)}"
    assert not (TEST_KEY_ROUTES | LIVE_KEY_ROUTES) - routes, "a listed route is gone"


async def test_a_test_key_is_refused_on_every_route_that_is_not_test_state(
    services: Services, tenant: TenantClient
) -> None:
    test = await _test_key(tenant)
    for method, template in sorted(_v1_routes(services) - TEST_KEY_ROUTES):
        path = re.sub(r"\{[a-z_]+\}", SOME_ID, template)
        kw: dict[str, Any] = {"json": {}} if method in {"POST", "PUT", "PATCH"} else {}
        if template == "/v1/suppressions" and method == "DELETE":
            kw["params"] = {"channel": "email", "address": "ada@example.com"}
        response = await test.api.request(method, path, headers=test.headers, **kw)
        _assert_needs_live_key(response, f"{method} {template}")


async def test_a_test_key_cannot_rotate_and_so_read_the_live_webhook_secret(
    tenant: TenantClient,
) -> None:
    created = await tenant.post("/v1/webhook-secret")
    assert created.status_code == 201, created.text
    test = await _test_key(tenant)
    _assert_needs_live_key(await test.post("/v1/webhook-secret/rotate"), "rotate")
    _assert_needs_live_key(await test.delete("/v1/webhook-secret"), "delete")
    status = (await tenant.get("/v1/webhook-secret")).json()
    assert status["preview"] == created.json()["preview"]
    assert status["previous_preview"] is None, "the secret was not rotated"


async def test_a_test_key_cannot_change_providers_domains_or_suppressions(
    tenant: TenantClient,
) -> None:
    suppressed = {"channel": "email", "address": "gone@example.com"}
    assert (await tenant.post("/v1/suppressions", json=suppressed)).status_code == 201
    test = await _test_key(tenant)
    provider = {
        "channel": "email",
        "provider": "resend",
        "credentials": {"api_key": "re_takeover_0123456789"},
        "priority": 0,
    }
    _assert_needs_live_key(await test.post("/v1/providers", json=provider), "provider")
    domain = {"domain": "acme.example", "provider_account_id": SOME_ID}
    _assert_needs_live_key(await test.post("/v1/domains", json=domain), "domain")
    _assert_needs_live_key(await test.delete("/v1/suppressions", params=suppressed), "unsuppress")
    assert (await tenant.get("/v1/providers")).json() == {"data": [], "next_cursor": None}
    assert (await tenant.get("/v1/domains")).json()["data"] == []
    listed = (await tenant.get("/v1/suppressions")).json()["data"]
    assert [entry["address"] for entry in listed] == ["gone@example.com"]


async def test_a_test_key_retries_and_reads_only_its_own_test_jobs(
    services: Services, tenant: TenantClient
) -> None:
    test = await _test_key(tenant)
    await stored_provider(services, tenant.tenant_id)
    live_id = (await send_email(tenant)).json()["id"]
    test_id = (await test.post("/v1/notifications/email", json=EMAIL)).json()["id"]
    await disable_providers(services, tenant.tenant_id)
    await services.worker().run(once=True)  # its provider gone since: both fail at once
    _assert_needs_live_key(await test.post(f"/v1/jobs/{live_id}/retry"), "retry live")
    assert (await tenant.get(f"/v1/jobs/{live_id}")).json()["status"] == "FAILED"
    assert (await test.get(f"/v1/jobs/{live_id}")).status_code == 404
    assert [j["id"] for j in (await test.get("/v1/jobs")).json()["data"]] == [test_id]
    retried = await test.post(f"/v1/jobs/{test_id}/retry")
    assert retried.status_code == 202, retried.text
    assert (await tenant.post(f"/v1/jobs/{live_id}/retry")).status_code == 202
