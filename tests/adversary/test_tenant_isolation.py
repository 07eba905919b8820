"""Tenant isolation, generated from the route table: tenant A using tenant B's ids
gets 404 and changes nothing.

Every route with a path parameter is found by walking the app's routes, so a new one
cannot slip past: each must either be exercised here (its parameters name an object
of tenant B that the fixture creates) or be listed in ``NOT_TENANT_SCOPED`` with the
reason. For each exercised route, A's request must be 404 ``not_found`` and leave the
whole database as it was; B's identical request must not be 404, which proves the id
was real and the 404 came from isolation.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from homing.api.app import create_app
from homing.models import Plan
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import metadata
from tests.adversary.fuzz_helpers import envelope_problem
from tests.conftest import TenantClient, make_tenant
from tests.dead_letter_helpers import dead_letter
from tests.e2e.conftest import register, send
from tests.figures import record
from tests.fixtures import settings_for

# Routes with path parameters that are not tenant objects, and why they are not here.
NOT_TENANT_SCOPED: dict[tuple[str, str], str] = {
    ("POST", "/inbound/{provider}/{account_id}"): (
        "no API key: the provider's signature authenticates it, and the account in the URL "
        "decides the tenant (tests/inbound: events only touch that tenant's jobs)"
    ),
    ("POST", "/inbound/billing/{vendor}"): "vendor is a payment provider's name, not an id",
    ("GET", "/admin/v1/tenants/{tenant_id}"): "operator API (admin token), not tenant-scoped",
    ("PATCH", "/admin/v1/tenants/{tenant_id}"): "operator API (admin token), not tenant-scoped",
    ("POST", "/admin/v1/tenants/{tenant_id}/suspend"): "operator API (admin token)",
    ("POST", "/admin/v1/tenants/{tenant_id}/unsuspend"): "operator API (admin token)",
    ("GET", "/admin/v1/dead-letters/{dead_letter_id}"): "operator API (admin token)",
    # The web console (homing.console): cookie sessions, not API keys; a member of one
    # tenant on another's pages is 404, pinned by tests/adversary/test_console.py.
    ("POST", "/operator/tenants/{tenant_id}/suspend"): "console, operators only",
    ("POST", "/operator/tenants/{tenant_id}/resume"): "console, operators only",
    ("POST", "/operator/tenants/{tenant_id}/plan"): "console, operators only",
    ("GET", "/t/{tenant_id}/dead-letters/purge"): "console, by seat",
    ("POST", "/t/{tenant_id}/dead-letters/purge"): "console, by seat",
    ("GET", "/t/{tenant_id}/domains/{domain_id}/remove"): "console, by seat",
    ("POST", "/t/{tenant_id}/domains/{domain_id}/remove"): "console, by seat",
    ("GET", "/t/{tenant_id}/providers/{provider_id}/inbound"): "console, by seat",
    ("POST", "/t/{tenant_id}/providers/{provider_id}/inbound"): "console, by seat",
    ("GET", "/t/{tenant_id}/providers/{provider_id}/inbound/remove"): "console, by seat",
    ("POST", "/t/{tenant_id}/providers/{provider_id}/inbound/remove"): "console, by seat",
    ("POST", "/t/{tenant_id}/webhooks/endpoints/enable"): "console, by seat",
    ("GET", "/t/{tenant_id}/"): "console, by seat",
    ("GET", "/t/{tenant_id}/notifications"): "console, by seat",
    ("GET", "/t/{tenant_id}/notifications/{notification_id}"): "console, by seat",
    ("GET", "/t/{tenant_id}/send-test"): "console, by seat",
    ("POST", "/t/{tenant_id}/send-test"): "console, by seat",
    ("GET", "/t/{tenant_id}/messages"): "console, by seat",
    ("GET", "/t/{tenant_id}/messages/{job_id}"): "console, by seat",
    ("POST", "/t/{tenant_id}/messages/{job_id}/retry"): "console, by seat",
    ("GET", "/t/{tenant_id}/dead-letters"): "console, by seat",
    ("POST", "/t/{tenant_id}/dead-letters/redrive"): "console, by seat",
    ("GET", "/t/{tenant_id}/api-keys"): "console, by seat",
    ("GET", "/t/{tenant_id}/providers"): "console, by seat",
    ("POST", "/t/{tenant_id}/providers/{provider_id}/move"): "console, by seat",
    ("POST", "/t/{tenant_id}/providers/{provider_id}/enabled"): "console, by seat",
    ("GET", "/t/{tenant_id}/domains"): "console, by seat",
    ("GET", "/t/{tenant_id}/webhooks"): "console, by seat",
    ("POST", "/t/{tenant_id}/webhooks/secret"): "console, by seat",
    ("POST", "/t/{tenant_id}/webhooks/secret/rotate"): "console, by seat",
    ("POST", "/t/{tenant_id}/webhooks/secret/delete"): "console, by seat",
    ("POST", "/t/{tenant_id}/domains"): "console, by seat",
    ("POST", "/t/{tenant_id}/domains/{domain_id}/verify"): "console, by seat",
    ("POST", "/t/{tenant_id}/api-keys"): "console, by seat",
    ("POST", "/t/{tenant_id}/api-keys/{key_id}/revoke"): "console, by seat",
    ("GET", "/t/{tenant_id}/audit"): "console, owners of the seat's tenant",
    ("GET", "/t/{tenant_id}/providers/new"): "console, by seat",
    ("POST", "/t/{tenant_id}/providers/new"): "console, by seat",
    ("GET", "/t/{tenant_id}/providers/{provider_id}/remove"): "console, by seat",
    ("POST", "/t/{tenant_id}/providers/{provider_id}/remove"): "console, by seat",
    ("GET", "/t/{tenant_id}/providers/{provider_id}/pacing"): "console, by seat",
    ("POST", "/t/{tenant_id}/providers/{provider_id}/pacing"): "console, by seat",
    ("POST", "/t/{tenant_id}/providers/{provider_id}/pacing/reset"): "console, by seat",
    ("GET", "/t/{tenant_id}/suppressions"): "console, by seat",
    ("POST", "/t/{tenant_id}/suppressions"): "console, by seat",
    ("POST", "/t/{tenant_id}/suppressions/remove"): "console, by seat",
    ("GET", "/t/{tenant_id}/users"): "console, owners of the seat's tenant",
    ("POST", "/t/{tenant_id}/users/invite"): "console, owners of the seat's tenant",
    ("POST", "/t/{tenant_id}/invitations/{invitation_id}/revoke"): "console, owners",
    ("POST", "/t/{tenant_id}/users/{user_id}/role"): "console, owners of the seat's tenant",
    ("POST", "/t/{tenant_id}/users/{user_id}/remove"): "console, owners of the seat's tenant",
    ("GET", "/t/{tenant_id}/templates"): "console, by seat",
    ("POST", "/t/{tenant_id}/templates"): "console, owners of the seat's tenant",
    ("GET", "/t/{tenant_id}/templates/{ref}"): "console, by seat",
    ("POST", "/t/{tenant_id}/templates/{ref}/versions"): "console, owners of the seat's tenant",
    ("GET", "/t/{tenant_id}/templates/{ref}/versions/{number}"): "console, by seat",
    ("POST", "/t/{tenant_id}/templates/{ref}/versions/{number}"): "console, owners",
    ("GET", "/t/{tenant_id}/layouts"): "console, by seat",
    ("POST", "/t/{tenant_id}/layouts"): "console, owners of the seat's tenant",
    ("GET", "/t/{tenant_id}/layouts/{ref}"): "console, by seat",
    ("POST", "/t/{tenant_id}/layouts/{ref}/versions"): "console, owners of the seat's tenant",
    ("GET", "/t/{tenant_id}/layouts/{ref}/versions/{number}"): "console, by seat",
    ("POST", "/t/{tenant_id}/layouts/{ref}/versions/{number}"): "console, owners",
    # External ids and category keys are the tenant's own names: a PUT of one another
    # tenant uses creates the caller's own (201), touching nothing of the other's;
    # tests/adversary/test_recipient_input.py pins that the same id in two tenants
    # names two recipients.
    ("PUT", "/v1/recipients/{external_id}"): "creates the caller's own recipient of that id",
    ("PUT", "/v1/categories/{key}"): "creates the caller's own category of that key",
    # The recipient's feed (docs/feed.md): a feed token, not an API key, names the
    # reader, and another tenant's or recipient's item is 404 there, pinned by
    # tests/adversary/test_feed_input.py; a preflight names no one and reads nothing.
    ("POST", "/feed/{item_id}/{mark}"): "the feed token names the reader, not an API key",
    ("OPTIONS", "/feed/{item_id}/{mark}"): "a CORS preflight: no credential, reads nothing",
    # An invitation's token is its own credential (stored as a hash), for no tenant's key.
    ("GET", "/invitations/{token}"): "console, by the invitation's token",
    ("POST", "/invitations/{token}"): "console, by the invitation's token",
    ("POST", "/invitations/{token}/mail"): "console, by the invitation's token",
    # A recipient link's token is signed and names its own tenant; one tenant's token
    # naming another's recipient is a 404 (tests/adversary/test_recipient_links.py).
    ("GET", "/u/{token}"): "a recipient link, by its signed token",
    ("POST", "/u/{token}"): "a recipient link, by its signed token",
    ("GET", "/p/{token}"): "a recipient link, by its signed token",
    ("POST", "/p/{token}"): "a recipient link, by its signed token",
}
# Bodies for the exercised routes that need one: valid, so only the id can fail.
BODIES: dict[tuple[str, str], Any] = {
    ("PATCH", "/v1/providers/{provider_id}"): {"priority": 7},
    ("POST", "/v1/templates/{ref}/versions"): {"sms": {"body": "hello"}},
    ("PATCH", "/v1/templates/{ref}/versions/{version_id}"): {"sms": {"body": "changed"}},
    ("POST", "/v1/templates/{ref}/preview"): {"data": {}, "version": 1},
    ("PUT", "/v1/providers/{provider_id}/inbound"): {
        "signing_secret": "whsec_" + base64.b64encode(os.urandom(24)).decode()
    },
    ("PATCH", "/v1/recipients/{external_id}/preferences"): {"categories": {}},
    ("PATCH", "/v1/jobs/{job_id}"): {
        "send_at": (datetime.now(UTC) + timedelta(days=1)).isoformat()
    },
    ("POST", "/v1/layouts/{ref}/versions"): {"html": "{{ content }}"},
    ("PATCH", "/v1/layouts/{ref}/versions/{version_id}"): {"html": "<div>{{ content }}</div>"},
}
ADMIN_TOKEN = "admin-token-isolation-0123456789"
# Written on every authenticated request (to the minute); not a change A made to B.
VOLATILE = {("api_keys", "last_used_at")}
_PARAM = re.compile(r"{(\w+)(?::[^}]*)?}")


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(database_url, tmp_path, secret_key, admin_token=ADMIN_TOKEN)


def route_table(app: FastAPI) -> Iterator[tuple[str, str]]:
    """(method, path template) of every HTTP route the app serves, included routers too."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # FastAPI before included-router contexts: routes are flat
        routes: list[Any] = list(app.routes)
    else:
        routes = list(iter_route_contexts(app.routes))
    for route in routes:
        path, methods = getattr(route, "path", None), getattr(route, "methods", None)
        assert path is not None, f"a route without a path: {route!r}"
        for method in sorted(methods or ()):
            if method != "HEAD":
                yield method, path


@dataclass
class Objects:
    """One tenant's objects, by the path parameter that names them."""

    client: TenantClient
    ids: dict[str, str]


async def _objects(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer, name: str
) -> Objects:
    tenant = await make_tenant(services, api, name, Plan.STARTUP)
    provider = await register(tenant, sandbox, "resend", 1)
    job_id = await send(tenant)
    # Before the domain below exists: the helper sends from acme.example.
    letter_id = await dead_letter(services, tenant)
    key = await tenant.post("/v1/api-keys", json={"name": "second"})
    domain = await tenant.post(
        "/v1/domains", json={"domain": f"{name}.example", "provider_account_id": provider["id"]}
    )
    inbound = await tenant.api.put(
        f"/v1/providers/{provider['id']}/inbound",
        json=BODIES[("PUT", "/v1/providers/{provider_id}/inbound")],
        headers=tenant.headers,
    )
    person = await tenant.put(f"/v1/recipients/person-{name}", json={"email": "p@example.com"})
    category = await tenant.put(
        f"/v1/categories/kind-{name}", json={"name": "Kind", "kind": "transactional"}
    )
    template = await tenant.post("/v1/templates", json={"key": f"tpl-{name}"})
    version = await tenant.post(
        f"/v1/templates/tpl-{name}/versions", json={"sms": {"body": "hi {{ name }}"}}
    )
    note = await tenant.post("/v1/templates", json={"key": f"note-{name}"})
    in_app = await tenant.post(
        f"/v1/templates/note-{name}/versions", json={"in_app": {"body": "hi {{ name }}"}}
    )
    published = await tenant.post(
        f"/v1/templates/note-{name}/versions/{in_app.json()['id']}/publish"
    )
    notification = await tenant.post(
        "/v1/notifications",
        json={
            "recipient": f"person-{name}",
            "template": f"note-{name}",
            "data": {"name": "P"},
            "channels": ["in_app"],
            "strategy": "all",
        },
    )
    layout = await tenant.post("/v1/layouts", json={"key": f"lay-{name}"})
    frame = await tenant.post(f"/v1/layouts/lay-{name}/versions", json={"html": "{{ content }}"})
    made = (key, domain, inbound, person, category, template, version, note, in_app, published)
    made += (layout, frame)
    for response in made:
        assert response.status_code in (200, 201), response.text
    assert notification.status_code == 202, notification.text
    ids = {
        "external_id": f"person-{name}",
        "key": f"kind-{name}",
        "dead_letter_id": letter_id,
        "provider_id": provider["id"],
        "job_id": job_id,
        "key_id": key.json()["id"],
        "domain_id": domain.json()["id"],
        "ref": template.json()["id"],
        "version_id": version.json()["id"],
        "notification_id": notification.json()["id"],
        # A layout's routes name it by the same parameters as a template's.
        "layout:ref": layout.json()["id"],
        "layout:version_id": frame.json()["id"],
    }
    return Objects(tenant, ids)


async def _dump(services: Services) -> list[str]:
    rows: list[str] = []
    async with services.db.transaction() as conn:
        for table in metadata.sorted_tables:
            columns = [c for c in table.columns if (table.name, c.name) not in VOLATILE]
            for row in (await conn.execute(select(*columns))).all():
                rows.append(f"{table.name}: {tuple(row)!r}")
    return sorted(rows)


def _exercised(app: FastAPI) -> list[tuple[str, str, list[str]]]:
    found = []
    for method, path in route_table(app):
        params = _PARAM.findall(path)
        if params and (method, path) not in NOT_TENANT_SCOPED:
            found.append((method, path, params))
    return found


def test_every_route_with_a_path_parameter_is_exercised_or_explained(
    services: Services,
) -> None:
    app = create_app(services)
    table = list(route_table(app))
    assert ("GET", "/v1/jobs/{job_id}") in table, "the route walk found the app's routes"
    known = {
        "provider_id",
        "job_id",
        "key_id",
        "domain_id",
        "dead_letter_id",
        "external_id",
        "key",
        "ref",
        "version_id",
        "notification_id",
    }
    unknown = [
        f"{method} {path}: no tenant object for {sorted(set(params) - known)}"
        for method, path, params in _exercised(app)
        if set(params) - known
    ]
    assert not unknown, (
        "routes whose path parameters this suite cannot fill; create the object in "
        "_objects() or explain the route in NOT_TENANT_SCOPED:\n" + "\n".join(unknown)
    )
    stale = [f"{m} {p}" for m, p in NOT_TENANT_SCOPED if (m, p) not in table]
    assert not stale, f"NOT_TENANT_SCOPED lists routes that no longer exist: {stale}"
    document = app.openapi()
    for method, path, _ in _exercised(app):
        operation = document["paths"][path][method.lower()]
        if "requestBody" in operation:
            assert (method, path) in BODIES, f"give {method} {path} a valid body in BODIES"


async def test_tenant_a_gets_404_for_tenant_b_ids_and_changes_nothing(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer
) -> None:
    app = create_app(services)
    exercised = _exercised(app)
    assert len(exercised) >= 10, exercised
    failures: list[str] = []
    for number, (method, path, params) in enumerate(exercised):
        a = await _objects(services, api, sandbox, f"a{number}")
        b = await _objects(services, api, sandbox, f"b{number}")
        url = path
        for name in params:
            wanted = f"layout:{name}" if path.startswith("/v1/layouts/") else name
            url = url.replace("{" + name + "}", b.ids.get(wanted, b.ids[name]))
        body = BODIES.get((method, path))
        before = await _dump(services)
        response = await api.request(method, url, json=body, headers=a.client.headers)
        after = await _dump(services)
        label = f"{method} {path}"
        if response.status_code != 404 or envelope_problem(response) is not None:
            failures.append(f"{label}: tenant A got {response.status_code} {response.text[:200]}")
        elif response.json()["error"]["code"] != "not_found":
            failures.append(f"{label}: 404 but code {response.json()['error']['code']}")
        if before != after:
            changed = sorted(set(before) ^ set(after))[:4]
            failures.append(f"{label}: tenant A's request changed the database: {changed}")
        control = await api.request(method, url, json=body, headers=b.client.headers)
        if control.status_code == 404 or control.status_code >= 500:
            failures.append(f"{label}: tenant B's own request got {control.status_code}")
    record(
        "isolation",
        database=services.db.dialect,
        routes_exercised=len(exercised),
        routes_explained=len(NOT_TENANT_SCOPED),
        failures=len(failures),
    )
    assert not failures, "\n".join(failures)


async def test_ids_of_another_tenant_inside_bodies_are_refused(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer
) -> None:
    a = await _objects(services, api, sandbox, "alpha")
    b = await _objects(services, api, sandbox, "bravo")
    before = await _dump(services)
    domain = await a.client.post(
        "/v1/domains",
        json={"domain": "stolen.example", "provider_account_id": b.ids["provider_id"]},
    )
    assert domain.status_code == 404, domain.text
    email = {"to": "x@example.com", "from": "a@alpha.example", "subject": "s", "text": "t"}
    pinned = await a.client.post(
        "/v1/notifications/email", json={**email, "provider": b.ids["provider_id"]}
    )
    assert pinned.status_code == 422, pinned.text
    assert pinned.json()["error"]["code"] == "unknown_provider"
    batch = await a.client.post(
        "/v1/notifications/email/batch",
        json={"messages": [{**email, "provider": b.ids["provider_id"]}]},
    )
    assert batch.json()["results"][0]["error"]["code"] == "unknown_provider"
    assert await _dump(services) == before


async def test_a_tenant_key_opens_no_admin_route(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer
) -> None:
    a = await _objects(services, api, sandbox, "alpha")
    b = await _objects(services, api, sandbox, "bravo")
    for method, path in route_table(create_app(services)):
        if not path.startswith("/admin/"):
            continue
        url = path.replace("{tenant_id}", b.client.tenant_id)
        body = {"name": "x"} if method in ("POST", "PATCH") else None
        response = await api.request(method, url, json=body, headers=a.client.headers)
        assert response.status_code == 401, f"{method} {path}: {response.status_code}"
