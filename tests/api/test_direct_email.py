"""The short way for ``POST /v1/notifications/email`` (homing.api.middleware.direct_email):
a valid request is accepted without FastAPI, anything else reaches FastAPI exactly as it
was sent."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from homing.api.middleware.direct_email import DirectEmail
from homing.api.middleware.sending_gate import PRINCIPAL_STATE
from homing.models import Plan
from homing.services import Services
from tests.conftest import TenantClient, stored_provider

GOOD = {"to": "ada@example.com", "from": "hello@acme.example", "subject": "Hi", "text": "x"}
JSON = {"Content-Type": "application/json"}


class Behind:
    """Stands in for FastAPI behind the middleware: records what reaches it."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        self.bodies.append(body)
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b"behind"})


@dataclass
class Direct:
    client: httpx.AsyncClient
    behind: Behind
    tenant_id: str


@pytest.fixture
async def direct(services: Services) -> AsyncIterator[Direct]:
    tenant, key = await services.tenants.create("t", Plan.STARTUP)
    await stored_provider(services, tenant.id)
    principal = await services.admission.authenticate(key)
    behind = Behind()
    middleware = DirectEmail(behind, services, max_body_bytes=10_000)

    async def admitted(scope: Scope, receive: Receive, send: Send) -> None:
        scope.setdefault("state", {})[PRINCIPAL_STATE] = principal
        await middleware(scope, receive, send)

    transport = httpx.ASGITransport(app=admitted)
    async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as client:
        yield Direct(client, behind, tenant.id)


async def test_a_valid_email_is_accepted_without_reaching_fastapi(
    direct: Direct, services: Services
) -> None:
    client, behind = direct.client, direct.behind
    response = await client.post("/v1/notifications/email", json=GOOD)
    assert response.status_code == 202, response.text
    assert set(response.json()) == {"id", "status"}
    assert response.headers["content-type"] == "application/json"
    assert behind.bodies == []
    job, _ = await services.jobs.get(direct.tenant_id, response.json()["id"])
    assert job.payload["to"] == "ada@example.com"


async def test_a_repeated_idempotency_key_is_a_replay_on_the_short_way(
    direct: Direct,
) -> None:
    client, behind = direct.client, direct.behind
    headers = {"Idempotency-Key": "order-1"}
    first = await client.post("/v1/notifications/email", json=GOOD, headers=headers)
    again = await client.post("/v1/notifications/email", json=GOOD, headers=headers)
    assert again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert behind.bodies == []


@pytest.mark.parametrize(
    "request_kw",
    [
        {"content": json.dumps({**GOOD, "to": "not-an-address"}).encode(), "headers": JSON},
        {"content": b"{not json", "headers": JSON},
        {"content": json.dumps(GOOD).encode(), "headers": {"Content-Type": "text/plain"}},
        {"content": json.dumps(GOOD).encode(), "headers": {**JSON, "Idempotency-Key": "x" * 256}},
        {
            "content": json.dumps(GOOD).encode() * 400,
            "headers": {"Content-Type": "application/json"},
        },
    ],
    ids=["invalid", "not-json", "not-json-type", "long-key", "over-limit"],
)
async def test_anything_else_reaches_fastapi_with_its_body_as_sent(
    direct: Direct, request_kw: dict[str, Any]
) -> None:
    client, behind = direct.client, direct.behind
    response = await client.post("/v1/notifications/email", **request_kw)
    assert response.status_code == 299
    assert behind.bodies == [request_kw["content"]]


async def test_a_body_without_a_declared_length_reaches_fastapi(
    direct: Direct,
) -> None:
    client, behind = direct.client, direct.behind
    body = json.dumps(GOOD).encode()

    async def chunks() -> AsyncIterator[bytes]:
        yield body[:10]
        yield body[10:]

    response = await client.post("/v1/notifications/email", content=chunks(), headers=JSON)
    assert response.status_code == 299
    assert behind.bodies == [body]


async def test_other_paths_pass_by(direct: Direct) -> None:
    client, behind = direct.client, direct.behind
    response = await client.post("/v1/notifications/webhook", json={"url": "https://x.test"})
    assert response.status_code == 299
    assert len(behind.bodies) == 1


async def test_in_the_app_the_short_way_keeps_the_rate_headers(tenant: TenantClient) -> None:
    response = await tenant.post("/v1/notifications/email", json=GOOD)
    assert response.status_code == 202, response.text
    assert {"ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"} <= set(response.headers)
    refused = await tenant.post("/v1/notifications/email", json={**GOOD, "to": "nope"})
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "validation_error"
    assert "ratelimit-remaining" in refused.headers
