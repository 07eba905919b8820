"""Hand-written hostile input, on SQLite and PostgreSQL: never a 5xx, always the envelope.

Where Schemathesis draws from the schema, these aim at what a schema cannot express:
bodies that are not JSON or not UTF-8, bodies over the limit, JSON nested deeper than a
parser or the database can take, integers beyond 64 bits, NUL characters (which
PostgreSQL refuses in text), and CR/LF in email headers, which must be refused at the
door and never reach a provider. The JSON-body routes are taken from the app's own
OpenAPI document, so a new route is covered without being listed here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.adversary.conftest import (
    ADMIN_TOKEN,
    HOSTILE_SETTINGS,
    INBOUND_MAX_BODY_BYTES,
    MAX_BODY_BYTES,
)
from tests.adversary.fuzz_helpers import envelope_problem
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, register
from tests.fixtures import settings_for
from tests.inbound.conftest import add_account, mailgun_body

pytestmark = pytest.mark.usefixtures("loopback_guard")

ANY_ID = "01a00000-0000-7000-8000-000000000000"
GOOD_EMAIL = {"to": "ada@example.com", "from": "hello@acme.example", "subject": "Hi", "text": "x"}


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    """Function-scoped settings for the hand-written hostile tests: admin API on,
    billing endpoints on, small body limits so oversized bodies stay cheap."""
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        max_body_bytes=MAX_BODY_BYTES,
        inbound_max_body_bytes=INBOUND_MAX_BODY_BYTES,
        **HOSTILE_SETTINGS,
    )


def refused(response: httpx.Response, *statuses: int) -> dict[str, Any]:
    """The response is a 4xx in the envelope (one of ``statuses`` when given)."""
    problem = envelope_problem(response)
    assert problem is None, f"{problem}: {response.text[:300]}"
    assert 400 <= response.status_code < 500, response.text[:300]
    if statuses:
        assert response.status_code in statuses, response.text[:300]
    body: dict[str, Any] = response.json()
    return body


async def json_routes(api: httpx.AsyncClient) -> list[tuple[str, str]]:
    """(method, path) of every operation that takes a JSON body, ids filled in."""
    document = (await api.get("/openapi.json")).json()
    found = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                filled = path
                names = ("job_id", "provider_id", "key_id", "domain_id", "tenant_id", "ref")
                for name in (*names, "version_id", "external_id", "key"):
                    filled = filled.replace("{" + name + "}", ANY_ID)
                assert "{" not in filled, f"fill the path parameters of {path}"
                found.append((method.upper(), filled))
    assert len(found) >= 10, found
    return found


def auth_for(tenant: TenantClient, path: str) -> dict[str, str]:
    if path.startswith("/admin/"):
        return {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    return tenant.headers


BAD_BODIES = {
    "truncated JSON": b'{"to": "a@b.co",',
    "not JSON": b"to=a@b.co&subject=hi",
    "not UTF-8": b'{"to": "\xff\xfe@b.co"}',
    "a JSON array": b"[1, 2, 3]",
    "a JSON string": b'"hello"',
    "JSON null": b"null",
    "nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "an integer beyond 64 bits": b'{"n": ' + b"9" * 400 + b"}",
    "a lone surrogate": b'{"name": "\\ud800", "to": "\\udfff@b.co"}',
    "empty": b"",
}


@pytest.mark.parametrize("bad", list(BAD_BODIES))
async def test_every_json_route_refuses_a_bad_body_in_the_envelope(
    api: httpx.AsyncClient, tenant: TenantClient, bad: str
) -> None:
    for method, path in await json_routes(api):
        headers = {**auth_for(tenant, path), "Content-Type": "application/json"}
        response = await api.request(method, path, content=BAD_BODIES[bad], headers=headers)
        refused(response)


async def test_every_json_route_refuses_an_oversized_body_with_413(
    api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    huge = b'{"x": "' + b"a" * MAX_BODY_BYTES + b'"}'
    for method, path in await json_routes(api):
        headers = {**auth_for(tenant, path), "Content-Type": "application/json"}
        response = await api.request(method, path, content=huge, headers=headers)
        assert refused(response, 413)["error"]["code"] == "payload_too_large"


async def test_inbound_refuses_an_oversized_body_before_reading_it(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    account = await add_account(services, tenant.tenant_id, "mailgun")
    secret = {"signing_secret": "mailgun-signing-key-hostile-0123"}
    await tenant.api.put(f"/v1/providers/{account.id}/inbound", json=secret, headers=tenant.headers)
    big = b"{" + b" " * INBOUND_MAX_BODY_BYTES + b"}"
    for path in (f"/inbound/mailgun/{account.id}", "/inbound/billing/paystack"):
        refused(await api.post(path, content=big), 413)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("subject", "Hi\r\nBcc: victim@example.com"),
        ("subject", "Hi\nBcc: victim@example.com"),
        ("subject", "Hi\rBcc: victim@example.com"),
        ("subject", "Hi\x00there"),
        ("from", "hello@acme.example\r\nBcc: victim@example.com"),
        ("from", "Acme\r\nBcc: victim@example.com <hello@acme.example>"),
        ("to", "ada@example.com\nBcc: victim@example.com"),
        ("to", "Ada\r\n <ada@example.com>"),
        ("to", "ada@example.com\x00"),
    ],
)
async def test_header_injection_is_refused_and_never_reaches_a_provider(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    field: str,
    value: str,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    single = await tenant.post("/v1/notifications/email", json={**GOOD_EMAIL, field: value})
    refused(single, 422)
    batch = await tenant.post(
        "/v1/notifications/email/batch",
        json={"messages": [{**GOOD_EMAIL, field: value}, {**GOOD_EMAIL, "subject": "ok"}]},
    )
    results = batch.json()["results"]
    assert batch.status_code == 202, batch.text
    assert results[0]["error"]["code"] == "validation_error"
    await deliver(services)
    messages = await sb.messages()
    assert [m["subject"] for m in messages] == ["ok"], "only the clean message is sent"
    for message in messages:
        assert "victim" not in repr(message)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/notifications/email", {**GOOD_EMAIL, "subject": "s" * 100_000}),
        ("/v1/notifications/email", {**GOOD_EMAIL, "to": "a" * 60_000 + "@example.com"}),
        ("/v1/notifications/email", {**GOOD_EMAIL, "ordering_key": "k" * 60_000}),
        ("/v1/notifications/webhook", {"url": "https://x.example/" + "p" * 60_000, "payload": 1}),
        (
            "/v1/notifications/webhook",
            {"url": "https://x.example/", "payload": 1, "event_type": "e" * 60_000},
        ),
        ("/v1/suppressions", {"address": "a" * 60_000 + "@example.com"}),
        ("/v1/api-keys", {"name": "n" * 60_000}),
    ],
)
@pytest.mark.sql("column lengths PostgreSQL enforces and SQLite does not")
async def test_very_long_strings_are_refused(
    tenant: TenantClient, path: str, body: dict[str, Any]
) -> None:
    refused(await tenant.post(path, json=body), 413, 422)


@pytest.mark.sql("column lengths PostgreSQL enforces and SQLite does not")
async def test_very_long_ids_and_headers_are_refused(tenant: TenantClient) -> None:
    refused(await tenant.get("/v1/jobs/" + "x" * 10_000), 404)
    refused(await tenant.delete("/v1/providers/" + "x" * 10_000), 404)
    response = await tenant.post(
        "/v1/notifications/email", json=GOOD_EMAIL, headers={"Idempotency-Key": "k" * 10_000}
    )
    refused(response, 422)


def _nested(depth: int) -> Any:
    value: Any = {"leaf": True}
    for _ in range(depth):
        value = [value]
    return value


async def test_webhook_payload_nesting_is_bounded_and_never_a_5xx(
    tenant: TenantClient,
) -> None:
    url = "http://127.0.0.1:9/hook"
    shallow = await tenant.post(
        "/v1/notifications/webhook", json={"url": url, "payload": _nested(40)}
    )
    assert shallow.status_code == 202, shallow.text
    big_number = await tenant.post(
        "/v1/notifications/webhook",
        content=b'{"url": "' + url.encode() + b'", "payload": {"n": ' + b"9" * 300 + b"}}",
        headers={"Content-Type": "application/json"},
    )
    assert big_number.status_code == 202, big_number.text
    for depth in (300, 900, 5_000, 30_000):
        text = '{"url": "' + url + '", "payload": ' + "[" * depth + "]" * depth + "}"
        response = await tenant.post(
            "/v1/notifications/webhook",
            content=text.encode(),
            headers={"Content-Type": "application/json"},
        )
        refused(response, 400, 422)


NUL_REQUESTS = [
    ("GET", "/v1/jobs/a%00b", None),
    ("GET", "/v1/jobs?cursor=%00", None),
    ("GET", "/v1/suppressions?cursor=%00", None),
    ("DELETE", "/v1/suppressions?address=a%00@b.co", None),
    ("DELETE", "/v1/providers/a%00", None),
    ("POST", "/v1/notifications/email", {**GOOD_EMAIL, "ordering_key": "k\x00"}),
    ("POST", "/v1/notifications/email", {**GOOD_EMAIL, "provider": "resend\x00"}),
    ("POST", "/v1/notifications/webhook", {"url": "https://x.example/", "payload": {"\x00": 1}}),
    (
        "POST",
        "/v1/notifications/webhook",
        {"url": "https://x.example/", "payload": 1, "ordering_key": "k\x00"},
    ),
    ("POST", "/v1/suppressions", {"address": "a\x00@b.co"}),
    ("POST", "/v1/api-keys", {"name": "a\x00"}),
    ("POST", "/v1/domains", {"domain": "a\x00.example", "provider_account_id": "x\x00"}),
    ("POST", "/admin/v1/tenants", {"name": "a\x00"}),
    ("GET", "/admin/v1/tenants/a%00", None),
]


@pytest.mark.parametrize(("method", "path", "body"), NUL_REQUESTS)
@pytest.mark.sql("PostgreSQL refuses NUL in text where SQLite stores it")
async def test_nul_characters_are_refused_not_a_database_error(
    api: httpx.AsyncClient, tenant: TenantClient, method: str, path: str, body: Any
) -> None:
    response = await api.request(method, path, json=body, headers=auth_for(tenant, path))
    # SQLite stores a NUL like any character; PostgreSQL refuses it in text. Either
    # way the answer is a success or a 4xx in the envelope, never a database error.
    problem = envelope_problem(response)
    assert problem is None, f"{problem}: {response.text[:300]}"


@pytest.mark.parametrize(
    ("credentials", "config"),
    [
        ({"api_key": "re_live_0123456789"}, {"x": 10**30}),
        ({"api_key": "re_live_0123456789", "n": 10**30}, {}),
        ({"api_key": "re_live_0123456789"}, {"deep": _nested(300)}),
        ({"api_key": "re_live_0123\r\nX-Injected: 1"}, {}),
        ({"api_key": "re_live_0123\u2603456789"}, {}),
        ({"api_key": "re_live_0123\x00456789"}, {}),
    ],
)
async def test_unstorable_or_unsendable_credentials_are_refused(
    tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, credentials: Any, config: Any
) -> None:
    config = {"base_url": sandbox.provider_base_url("resend"), **config}
    body = {"channel": "email", "provider": "resend", "credentials": credentials, "config": config}
    refused(await tenant.post("/v1/providers", json=body), 422)
    assert (await tenant.get("/v1/providers")).json() == {"data": [], "next_cursor": None}


@pytest.mark.parametrize(
    ("credentials", "config"),
    [
        ({"host": "127.0.0.1", "port": 99_999_999}, {}),
        ({"host": "127.0.0.1", "port": -1}, {}),
        ({"host": "127.0.0.1", "port": "twenty-five"}, {}),
        ({"host": "127.0.0.1", "port": 25}, {"timeout": "soon"}),
    ],
)
async def test_bad_smtp_settings_are_refused(
    tenant: TenantClient, credentials: Any, config: Any
) -> None:
    body = {"channel": "email", "provider": "smtp", "credentials": credentials, "config": config}
    refused(await tenant.post("/v1/providers", json=body), 422)


async def test_inbound_bodies_that_break_parsers_are_refused_or_quarantined(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    account = await add_account(services, tenant.tenant_id, "mailgun")
    key = "mailgun-signing-key-hostile-0123"
    response = await tenant.api.put(
        f"/v1/providers/{account.id}/inbound",
        json={"signing_secret": key},
        headers=tenant.headers,
    )
    assert response.status_code == 200, response.text
    path = f"/inbound/mailgun/{account.id}"
    deep = b"[" * 3_000 + b"]" * 3_000
    refused(await api.post(path, content=deep), 401)  # unsigned: refused before parsing
    for event in (_nested(300), {"event": "delivered", "timestamp": 10**30}, "x", None):
        signed = mailgun_body(event, key) if event is not None else mailgun_body({}, key)
        answer = await api.post(path, content=signed)
        assert answer.status_code == 200, answer.text
        assert answer.json()["applied"] == 0
