"""Adversary: a hostile ``X-Request-Id``. The API echoes the request id on every
response and puts it in the request's log lines, so a client's id could smuggle a
header (CR/LF), bloat every response and log line (10 KB, thousands of headers) or put
unicode into logs. Only one header of at most 128 characters of ``[A-Za-z0-9._:-]`` is
kept; anything else is ignored, never echoed or logged, and a new id is made."""

from __future__ import annotations

import json

import httpx
import pytest

from homing.api.app import create_app
from homing.services import Services
from tests.conftest import TenantClient, make_tenant
from tests.fixtures import captured_logs
from tests.request_id_helpers import GENERATED, call, with_logging_route

HOSTILE = {
    "ten_kilobytes": b"a" * 10_240,
    "one_too_long": b"b" * 129,
    "crlf_header_injection": b"abc\r\nSet-Cookie: session=stolen",
    "bare_lf": b"abc\nx",
    "unicode": "r\u00e9quest-\u2603-\u202e".encode(),
    "nul": b"abc\x00def",
    "spaces_and_quotes": b'a b "c"',
    "empty": b"",
}


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    """A tenant that can send: an email and an SMS provider stored (a send no provider
    could deliver is refused at accept)."""
    return await make_tenant(services, api, "acme", provider=True)


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
async def test_hostile_request_id_is_replaced_not_echoed_nor_logged(
    services: Services, value: bytes
) -> None:
    app = with_logging_route(create_app(services))
    with captured_logs() as buffer:
        response = await call(app, "/_test/log", [(b"x-request-id", value)])
    assert response.status == 200
    [echoed] = response.header_values(b"x-request-id")
    assert GENERATED.fullmatch(echoed.decode("ascii"))
    lines = [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]
    served = [line for line in lines if line["event"] == "test route served"]
    assert [line["request_id"] for line in served] == [echoed.decode()]
    if value:
        assert value.decode("utf-8", "replace") not in buffer.getvalue()
        assert all(value not in v for _k, v in response.headers)


async def test_many_request_id_headers_are_all_ignored(services: Services) -> None:
    app = create_app(services)
    headers = [(b"x-request-id", f"id-{i}".encode()) for i in range(2_000)]
    response = await call(app, "/healthz", headers)
    assert response.status == 200
    [echoed] = response.header_values(b"x-request-id")
    assert GENERATED.fullmatch(echoed.decode())


async def test_longest_allowed_request_id_is_kept(services: Services) -> None:
    kept = b"A-z.0:9_" * 16  # 128 characters, every kind allowed
    response = await call(create_app(services), "/healthz", [(b"x-request-id", kept)])
    assert response.header_values(b"x-request-id") == [kept]


async def test_hostile_request_id_on_the_direct_email_path_is_replaced(
    services: Services, tenant: TenantClient
) -> None:
    body = json.dumps(
        {"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"}
    ).encode()
    headers = [
        (b"authorization", f"Bearer {tenant.key}".encode()),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"x-request-id", b"x\r\nInjected: yes" + b"y" * 10_000),
    ]
    app = create_app(services)
    response = await call(app, "/v1/notifications/email", headers, method="POST", body=body)
    assert response.status == 202, response.body
    [echoed] = response.header_values(b"x-request-id")
    assert GENERATED.fullmatch(echoed.decode())
    assert not response.header_values(b"injected")
