"""Bad input gets a clear error in the envelope: never a 500, never a job."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from homing.models import Queue
from homing.services import Services
from tests.conftest import TenantClient
from tests.store_helpers import pending_count

GOOD = {"to": "ada@example.com", "from": "hello@acme.example", "subject": "Hi", "text": "x"}


def _error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    return body


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer hk_nope"}, {"Authorization": "Basic abc"}],
)
async def test_missing_or_unknown_key_is_401(
    api: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    response = await api.post("/v1/notifications/email", json=GOOD, headers=headers)
    _error(response, 401, "unauthenticated")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"to": "not-an-address"}, ""),
        ({"to": "a@b.co\r\nBcc: victim@x.co"}, ""),
        ({"from": "x@y.co\nBcc: v@x.co"}, ""),
        ({"subject": "Hi\r\nBcc: victim@example.com"}, ""),
        ({"subject": ""}, "subject"),
        ({"text": None}, ""),
        ({"priority": "URGENT"}, "priority"),
        ({"delivery": "exactly_once"}, "delivery"),
        ({"unknown": 1}, "unknown"),
        ({"to": 5}, "to"),
        ({"fallback": "resend"}, ""),
    ],
)
async def test_invalid_email_requests_are_422_and_store_nothing(
    tenant: TenantClient, services: Services, change: dict[str, Any], field: str
) -> None:
    body = {**GOOD, **change}
    body = {k: v for k, v in body.items() if v is not None}
    response = await tenant.post("/v1/notifications/email", json=body)
    error = _error(response, 422, "validation_error")
    assert any(e["field"] == field for e in error["error"]["details"]["errors"])
    assert await pending_count(services.db, Queue.EMAIL) == 0


async def test_malformed_json_is_422(tenant: TenantClient) -> None:
    response = await tenant.post(
        "/v1/notifications/email",
        content=b'{"to": "a@b.co",',
        headers={"Content-Type": "application/json"},
    )
    _error(response, 422, "validation_error")


async def test_non_utf8_body_is_400(tenant: TenantClient) -> None:
    response = await tenant.post(
        "/v1/notifications/email",
        content=b'{"to": "\xff\xfe@b.co"}',
        headers={"Content-Type": "application/json"},
    )
    _error(response, 400, "malformed_request")


async def test_oversized_body_is_413(tenant: TenantClient, services: Services) -> None:
    huge = "x" * (services.settings.server.max_body_bytes + 10)
    response = await tenant.post("/v1/notifications/email", json={**GOOD, "text": huge})
    _error(response, 413, "payload_too_large")


async def test_oversized_body_without_content_length_is_413(
    tenant: TenantClient, services: Services
) -> None:
    chunk = b"x" * 65536
    count = services.settings.server.max_body_bytes // len(chunk) + 2

    async def stream() -> Any:
        for _ in range(count):
            yield chunk

    response = await tenant.post(
        "/v1/notifications/email",
        content=stream(),
        headers={"Content-Type": "application/json"},
    )
    _error(response, 413, "payload_too_large")


async def test_unknown_route_and_method_use_the_envelope(tenant: TenantClient) -> None:
    _error(await tenant.get("/v1/nothing-here"), 404, "not_found")
    _error(await tenant.delete("/v1/notifications/email"), 405, "method_not_allowed")


async def test_unknown_job_is_404(tenant: TenantClient) -> None:
    _error(await tenant.get("/v1/jobs/00000000-0000-7000-8000-000000000000"), 404, "not_found")


async def test_job_list_rejects_a_bad_status(tenant: TenantClient) -> None:
    _error(await tenant.get("/v1/jobs", params={"status": "LOST"}), 422, "validation_error")


async def test_provider_registration_needs_its_credential_fields(tenant: TenantClient) -> None:
    response = await tenant.post(
        "/v1/providers",
        json={"channel": "email", "provider": "mailgun", "credentials": {"api_key": "key-1"}},
    )
    error = _error(response, 422, "invalid_request")
    assert error["error"]["details"]["missing"] == ["domain"]
    response = await tenant.post(
        "/v1/providers",
        json={"channel": "email", "provider": "carrier-pigeon", "credentials": {}},
    )
    _error(response, 422, "validation_error")


async def test_healthz(api: httpx.AsyncClient) -> None:
    response = await api.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


async def test_openapi_is_served(api: httpx.AsyncClient) -> None:
    response = await api.get("/openapi.json")
    assert response.status_code == 200
    assert "/v1/notifications/email" in response.json()["paths"]
