"""Hostile bodies to ``PATCH /v1/settings``: each is answered 4xx at once, the body is
not read past a small bound, and the tenant's settings stay exactly as they were."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest

from homing.services import Services
from tests.conftest import TenantClient

# Generous: a refusal is immediate; this only catches a request that hangs or parses
# megabytes.
AT_ONCE_SECONDS = 10
KEPT = {"webhook_signature_format": "notifykit", "default_ttl_seconds": {"email": 600}}


@pytest.fixture
async def configured(tenant: TenantClient) -> TenantClient:
    """A tenant that changed its format, so a hostile write would show."""
    response = await tenant.patch("/v1/settings", json=KEPT)
    assert response.status_code == 200, response.text
    return tenant


async def _unchanged(services: Services, tenant: TenantClient, before: object) -> None:
    response = await tenant.get("/v1/settings")
    assert response.status_code == 200
    defaults = {"unsubscribe_mailbox": None, "quiet_hours": None}
    assert response.json() == {"contact_email": None, "operations_url": None, **defaults, **KEPT}
    assert await services.tenant_settings.get(tenant.tenant_id) == before


async def _patch(tenant: TenantClient, **kw: object) -> httpx.Response:
    return await asyncio.wait_for(tenant.patch("/v1/settings", **kw), AT_ONCE_SECONDS)


HOSTILE_JSON = [
    pytest.param({"webhook_signature_format": "design", "contact_emial": "x"}, id="unknown-key"),
    pytest.param({"__proto__": {"webhook_signature_format": "design"}}, id="proto-key"),
    pytest.param({"webhook_signature_format": None}, id="null"),
    pytest.param({"webhook_signature_format": 1}, id="number"),
    pytest.param({"webhook_signature_format": True}, id="bool"),
    pytest.param({"webhook_signature_format": ["design"]}, id="list"),
    pytest.param({"webhook_signature_format": {"value": "design"}}, id="object"),
    pytest.param({"webhook_signature_format": "DESIGN"}, id="case"),
    pytest.param({"webhook_signature_format": "design "}, id="padded"),
    pytest.param({"webhook_signature_format": "design\u0000"}, id="nul"),
    pytest.param({"webhook_signature_format": "design,notifykit"}, id="list-in-string"),
    pytest.param({"webhook_signature_format": "design' OR '1'='1"}, id="sql"),
    pytest.param({"webhook_signature_format": "x" * 3000}, id="long"),
    pytest.param(["webhook_signature_format", "design"], id="array-body"),
    pytest.param("design", id="string-body"),
]


@pytest.mark.parametrize("body", HOSTILE_JSON)
async def test_a_hostile_settings_body_is_422_and_changes_nothing(
    services: Services, configured: TenantClient, body: object
) -> None:
    before = await services.tenant_settings.get(configured.tenant_id)
    response = await _patch(configured, json=body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert "x" * 100 not in response.text  # the hostile value is not echoed back
    await _unchanged(services, configured, before)


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b'{"webhook_signature_format": "design"', id="truncated"),
        pytest.param(b"\xff\xfe{}", id="not-utf8"),
        pytest.param(b"[" * 2000 + b"]" * 2000, id="deep-nesting"),
        pytest.param(
            b'{"webhook_signature_format": "design", "webhook_signature_format": 7}',
            id="duplicate-key",
        ),
    ],
)
async def test_malformed_json_is_422_and_changes_nothing(
    services: Services, configured: TenantClient, raw: bytes
) -> None:
    before = await services.tenant_settings.get(configured.tenant_id)
    response = await _patch(configured, content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    await _unchanged(services, configured, before)


async def test_a_huge_declared_body_is_413_and_changes_nothing(
    services: Services, configured: TenantClient
) -> None:
    before = await services.tenant_settings.get(configured.tenant_id)
    body = json.dumps({"webhook_signature_format": "design", "pad": "x" * 100_000})
    response = await _patch(configured, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    await _unchanged(services, configured, before)


async def test_an_endless_streamed_body_is_not_read_past_a_small_bound(
    services: Services, configured: TenantClient
) -> None:
    before = await services.tenant_settings.get(configured.tenant_id)
    sent = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        yield b'{"webhook_signature_format": "design", "pad": "'
        while sent < 100 * 2**20:  # 100 MiB, were it all read
            sent += 2**14
            yield b"x" * 2**14

    response = await _patch(
        configured, content=endless(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert sent <= 64 * 2**10, f"{sent} bytes were read of a settings body"
    await _unchanged(services, configured, before)


async def test_a_test_key_cannot_change_settings(
    services: Services, configured: TenantClient
) -> None:
    before = await services.tenant_settings.get(configured.tenant_id)
    issued = (await configured.post("/v1/api-keys", json={"test": True})).json()
    test = TenantClient(configured.api, configured.tenant_id, issued["key"])
    for body in ({"webhook_signature_format": "design"}, {"bogus": 1}):
        response = await _patch(test, json=body)
        assert response.status_code == 403, response.text
        assert response.json()["error"]["code"] == "forbidden"
    await _unchanged(services, configured, before)


async def test_another_tenants_key_changes_only_its_own_settings(
    services: Services, api: httpx.AsyncClient, configured: TenantClient
) -> None:
    before = await services.tenant_settings.get(configured.tenant_id)
    other, key = await services.tenants.create("mallory")
    mallory = TenantClient(api, other.id, key)
    response = await _patch(mallory, json={"webhook_signature_format": "design"})
    assert response.status_code == 200
    await _unchanged(services, configured, before)
