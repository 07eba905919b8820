"""API keys: several per tenant, shown once, listed without secrets, revoked at once."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import api_keys
from tests.admission_helpers import admission_settings, send_email
from tests.conftest import TenantClient


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return admission_settings(database_url, tmp_path, secret_key)


def _as(tenant: TenantClient, key: str) -> TenantClient:
    return TenantClient(tenant.api, tenant.tenant_id, key)


async def test_a_new_key_is_shown_once_and_works(services: Services, tenant: TenantClient) -> None:
    response = await tenant.post("/v1/api-keys", json={"name": "ci"})
    assert response.status_code == 201
    assert response.headers["Cache-Control"] == "no-store"
    issued = response.json()
    key = issued["key"]
    assert key.startswith("hk_") and not key.startswith("hk_test_")
    assert key.startswith(issued["prefix"]) and len(issued["prefix"]) < 10
    assert (issued["name"], issued["test"], issued["last_used_at"]) == ("ci", False, None)
    assert (await send_email(_as(tenant, key))).status_code == 202
    listed = (await tenant.get("/v1/api-keys")).json()["data"]
    assert [k["name"] for k in listed] == ["default", "ci"]
    assert all("key" not in k for k in listed)
    assert key not in str(listed)
    ci = next(k for k in listed if k["name"] == "ci")
    assert ci["last_used_at"] is not None
    async with services.db.transaction() as conn:
        stored = (await conn.execute(select(api_keys))).all()
    assert key not in str([tuple(row) for row in stored])


async def test_a_revoked_key_is_refused_at_once(services: Services, tenant: TenantClient) -> None:
    issued = (await tenant.post("/v1/api-keys", json={"name": "old"})).json()
    old = _as(tenant, issued["key"])
    assert (await old.get("/v1/jobs")).status_code == 200, "now in the auth cache"
    assert (await tenant.delete(f"/v1/api-keys/{issued['id']}")).status_code == 204
    refused = await old.get("/v1/jobs")
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "unauthenticated"
    assert [k["name"] for k in (await tenant.get("/v1/api-keys")).json()["data"]] == ["default"]
    assert (await tenant.delete(f"/v1/api-keys/{issued['id']}")).status_code == 404


async def test_the_last_key_cannot_be_revoked(tenant: TenantClient) -> None:
    [only] = (await tenant.get("/v1/api-keys")).json()["data"]
    response = await tenant.delete(f"/v1/api-keys/{only['id']}")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"


async def test_another_tenants_key_is_not_found(
    services: Services, tenant: TenantClient, api: httpx.AsyncClient
) -> None:
    other, _ = await services.tenants.create("other")
    [theirs] = (await TenantClient(api, other.id, _).get("/v1/api-keys")).json()["data"]
    assert (await tenant.delete(f"/v1/api-keys/{theirs['id']}")).status_code == 404


async def test_a_test_key_sends_but_cannot_manage_keys(tenant: TenantClient) -> None:
    issued = (await tenant.post("/v1/api-keys", json={"name": "sandbox", "test": True})).json()
    assert issued["key"].startswith("hk_test_")
    assert issued["prefix"].startswith("hk_test_")
    test = _as(tenant, issued["key"])
    assert (await send_email(test)).status_code == 202
    for response in (
        await test.get("/v1/api-keys"),
        await test.post("/v1/api-keys", json={"name": "escalate"}),
        await test.delete(f"/v1/api-keys/{issued['id']}"),
    ):
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "forbidden"


async def test_a_key_name_is_checked(tenant: TenantClient) -> None:
    response = await tenant.post("/v1/api-keys", json={"name": "x" * 201})
    assert response.status_code == 422
    assert (await tenant.post("/v1/api-keys", json={"nme": "typo"})).status_code == 422
