"""``X-Request-Id``: a client's well-formed id is kept, else one is made; it is on every
response (errors and the short email path included) and in the request's log lines."""

from __future__ import annotations

import json

import httpx
import structlog
from fastapi import FastAPI

from homing.api.app import create_app
from homing.services import Services
from tests.conftest import TenantClient
from tests.fixtures import captured_logs
from tests.request_id_helpers import GENERATED, with_logging_route

EMAIL = {"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"}


def _client(app: FastAPI) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://homing.test")


async def test_client_request_id_is_echoed(api: httpx.AsyncClient) -> None:
    response = await api.get("/healthz", headers={"X-Request-Id": "req-42:a.b_c"})
    assert response.headers["x-request-id"] == "req-42:a.b_c"


async def test_request_id_is_made_when_none_is_sent(api: httpx.AsyncClient) -> None:
    first = (await api.get("/healthz")).headers["x-request-id"]
    second = (await api.get("/healthz")).headers["x-request-id"]
    assert GENERATED.fullmatch(first) and GENERATED.fullmatch(second) and first != second


async def test_error_responses_carry_the_request_id(api: httpx.AsyncClient) -> None:
    headers = {"X-Request-Id": "err-1"}
    unauthenticated = await api.get("/v1/jobs", headers=headers)
    missing = await api.get("/no/such/path", headers=headers)
    admin = await api.get("/admin/v1/tenants", headers=headers)
    for response in (unauthenticated, missing, admin):
        assert response.status_code >= 400
        assert response.headers["x-request-id"] == "err-1"


async def test_unexpected_error_carries_the_request_id(services: Services) -> None:
    app = create_app(services)

    @app.get("/_test/boom")
    async def _boom() -> None:
        raise RuntimeError("boom")

    async with _client(app) as client:
        response = await client.get("/_test/boom", headers={"X-Request-Id": "boom-1"})
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"
    assert response.headers["x-request-id"] == "boom-1"


async def test_direct_email_path_echoes_the_request_id(tenant: TenantClient) -> None:
    response = await tenant.post(
        "/v1/notifications/email", json=EMAIL, headers={"X-Request-Id": "mail-1"}
    )
    assert response.status_code == 202, response.text
    assert response.headers["x-request-id"] == "mail-1"
    refused = await tenant.post(
        "/v1/notifications/email", json={**EMAIL, "to": ""}, headers={"X-Request-Id": "mail-2"}
    )
    assert refused.status_code == 422
    assert refused.headers["x-request-id"] == "mail-2"


async def test_log_lines_of_a_request_carry_its_id(services: Services) -> None:
    async with _client(with_logging_route(create_app(services))) as client:
        with captured_logs() as buffer:
            await client.get("/_test/log", headers={"X-Request-Id": "log-1"})
            await client.get("/_test/log")
    served = [
        json.loads(line) for line in buffer.getvalue().splitlines() if '"test route served"' in line
    ]
    assert served[0]["request_id"] == "log-1"
    assert GENERATED.fullmatch(served[1]["request_id"])
    # Bound for the request only: nothing logged after it carries an id.
    assert "request_id" not in structlog.contextvars.get_contextvars()
