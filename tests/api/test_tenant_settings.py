"""``GET/PATCH /v1/settings``: defaults shown, a strict body, a live key to change."""

from __future__ import annotations

import httpx

from homing.services import Services
from tests.conftest import TenantClient, make_tenant

DEFAULTS = {
    "webhook_signature_format": "design",
    "contact_email": None,
    "operations_url": None,
    "default_ttl_seconds": {},
    "unsubscribe_mailbox": None,
    "quiet_hours": None,
}
NOTIFYKIT = {**DEFAULTS, "webhook_signature_format": "notifykit"}


def _as(tenant: TenantClient, key: str) -> TenantClient:
    return TenantClient(tenant.api, tenant.tenant_id, key)


async def test_a_new_tenant_sees_every_default(tenant: TenantClient) -> None:
    response = await tenant.get("/v1/settings")
    assert response.status_code == 200
    assert response.json() == DEFAULTS


async def test_patch_changes_the_format_and_get_shows_it(tenant: TenantClient) -> None:
    response = await tenant.patch("/v1/settings", json={"webhook_signature_format": "notifykit"})
    assert response.status_code == 200, response.text
    assert response.json() == NOTIFYKIT
    assert (await tenant.get("/v1/settings")).json() == NOTIFYKIT
    back = await tenant.patch("/v1/settings", json={"webhook_signature_format": "design"})
    assert back.json() == DEFAULTS


async def test_an_empty_patch_changes_nothing(tenant: TenantClient) -> None:
    await tenant.patch("/v1/settings", json={"webhook_signature_format": "notifykit"})
    response = await tenant.patch("/v1/settings", json={})
    assert response.status_code == 200
    assert response.json() == NOTIFYKIT


async def test_an_unknown_format_is_422_naming_the_allowed_values(tenant: TenantClient) -> None:
    response = await tenant.patch("/v1/settings", json={"webhook_signature_format": "stripe"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    [problem] = error["details"]["errors"]
    assert problem["field"] == "webhook_signature_format"
    assert "'design'" in problem["problem"] and "'notifykit'" in problem["problem"]


async def test_an_unknown_setting_is_422(tenant: TenantClient) -> None:
    response = await tenant.patch("/v1/settings", json={"webhook_signature_fromat": "design"})
    assert response.status_code == 422
    [problem] = response.json()["error"]["details"]["errors"]
    assert problem["field"] == "webhook_signature_fromat"


async def test_a_test_key_reads_but_cannot_change_settings(tenant: TenantClient) -> None:
    issued = (await tenant.post("/v1/api-keys", json={"test": True})).json()
    test = _as(tenant, issued["key"])
    assert (await test.get("/v1/settings")).json() == DEFAULTS
    response = await test.patch("/v1/settings", json={"webhook_signature_format": "notifykit"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    assert (await tenant.get("/v1/settings")).json() == DEFAULTS


async def test_settings_are_per_tenant(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "other")
    await tenant.patch("/v1/settings", json={"webhook_signature_format": "notifykit"})
    assert (await other.get("/v1/settings")).json() == DEFAULTS


async def test_without_a_key_settings_are_401(api: httpx.AsyncClient) -> None:
    assert (await api.get("/v1/settings")).status_code == 401
    response = await api.patch("/v1/settings", json={"webhook_signature_format": "notifykit"})
    assert response.status_code == 401


async def test_the_patch_body_is_in_the_openapi_document(api: httpx.AsyncClient) -> None:
    spec = (await api.get("/openapi.json")).json()
    body = spec["paths"]["/v1/settings"]["patch"]["requestBody"]
    schema = body["content"]["application/json"]["schema"]
    assert schema["properties"]["webhook_signature_format"]["enum"] == ["design", "notifykit"]
    assert schema["additionalProperties"] is False
