"""The operator API: guarded by HOMING_ADMIN_TOKEN, absent without it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.api.app import create_app
from homing.clock import ManualClock
from homing.services import Services, build
from homing.settings import Settings
from tests.admission_helpers import ADMIN, ADMIN_TOKEN, admission_settings, send_email, usage
from tests.conftest import TenantClient, stored_provider

TENANT = "0194d1c0-0000-7000-8000-000000000000"
ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/admin/v1/tenants", {"name": "acme"}),
    ("GET", "/admin/v1/tenants", None),
    ("GET", f"/admin/v1/tenants/{TENANT}", None),
    ("PATCH", f"/admin/v1/tenants/{TENANT}", {"plan": "INDIE"}),
    ("POST", f"/admin/v1/tenants/{TENANT}/suspend", None),
    ("POST", f"/admin/v1/tenants/{TENANT}/unsuspend", None),
    ("GET", "/admin/v1/jobs", None),
    ("GET", "/admin/v1/queues", None),
    ("GET", "/admin/v1/audit-log", None),
]


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return admission_settings(database_url, tmp_path, secret_key)


async def _admin(api: httpx.AsyncClient, method: str, path: str, **kw: Any) -> httpx.Response:
    return await api.request(method, path, headers=ADMIN, **kw)


async def _created(api: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await _admin(api, "POST", "/admin/v1/tenants", json={"name": "acme", **body})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


WRONG = [None, "Bearer wrong-token", f"Bearer {ADMIN_TOKEN}x", f"Basic {ADMIN_TOKEN}", "Bearer "]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
async def test_every_admin_route_refuses_a_missing_or_wrong_token(
    api: httpx.AsyncClient, method: str, path: str, body: dict[str, Any] | None
) -> None:
    for authorization in WRONG:
        headers = {"Authorization": authorization} if authorization else {}
        response = await api.request(method, path, json=body, headers=headers)
        assert response.status_code == 401, authorization
        assert response.json()["error"]["code"] == "unauthenticated"
        assert ADMIN_TOKEN not in response.text
    malformed = await api.request(method, path, content=b"{", headers={"X": "y"})
    assert malformed.status_code == 401, "the token is checked before the body is read"


async def test_a_tenant_api_key_is_not_an_admin_token(
    api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    response = await tenant.get("/admin/v1/tenants")
    assert response.status_code == 401


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
async def test_without_an_admin_token_the_admin_api_does_not_exist(
    settings: Settings, clock: ManualClock, method: str, path: str, body: dict[str, Any] | None
) -> None:
    disabled = settings.changed(admin_token=None)
    services = await build(disabled, clock=clock)
    try:
        transport = httpx.ASGITransport(app=create_app(services))
        async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as api:
            response = await api.request(method, path, json=body, headers=ADMIN)
    finally:
        await services.aclose()
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


async def test_create_list_and_show_a_tenant(services: Services, api: httpx.AsyncClient) -> None:
    created = await _created(api, plan="INDIE", rate_limit_per_minute=70)
    await stored_provider(services, created["id"])
    assert created["api_key"].startswith("hk_")
    assert created["plan"] == "INDIE"
    assert created["limits"] == {
        "rate_per_minute": 70,
        "quotas": {"chat": 10000, "sms": 1000, "webhook": 4000},
        "priority": None,
    }
    client = TenantClient(api, created["id"], created["api_key"])
    assert (await send_email(client)).status_code == 202
    listed = (await _admin(api, "GET", "/admin/v1/tenants")).json()
    assert [t["id"] for t in listed["data"]] == [created["id"]]
    assert "api_key" not in listed["data"][0]
    shown = (await _admin(api, "GET", f"/admin/v1/tenants/{created['id']}")).json()
    assert shown["usage"]["used"]["email"] == 1
    assert shown["usage"]["rate_limit"]["remaining"] == 69
    missing = await _admin(api, "GET", f"/admin/v1/tenants/{TENANT}")
    assert missing.status_code == 404


async def test_tenants_are_paged(api: httpx.AsyncClient) -> None:
    ids = [(await _created(api, name=f"t{n}"))["id"] for n in range(3)]
    first = (await _admin(api, "GET", "/admin/v1/tenants", params={"limit": 2})).json()
    assert [t["id"] for t in first["data"]] == ids[:2]
    params = {"limit": 2, "cursor": first["next_cursor"]}
    rest = (await _admin(api, "GET", "/admin/v1/tenants", params=params)).json()
    assert ([t["id"] for t in rest["data"]], rest["next_cursor"]) == (ids[2:], None)


async def test_change_plan_and_custom_limits_take_effect(api: httpx.AsyncClient) -> None:
    created = await _created(api)
    client = TenantClient(api, created["id"], created["api_key"])
    path = f"/admin/v1/tenants/{created['id']}"
    changed = await _admin(
        api, "PATCH", path, json={"plan": "STARTUP", "quotas": {"webhook+email": 7, "sms": 2}}
    )
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert body["custom_quotas"] == {"email+webhook": 7, "sms": 2}
    assert body["limits"]["quotas"] == {
        "chat": 50000,
        "email+webhook": 7,
        "sms": 2,
        "webhook": 15000,
    }
    assert body["limits"]["rate_per_minute"] == 200
    report = await usage(client)
    assert report["plan"] == "STARTUP"
    assert [q["name"] for q in report["quotas"]] == ["chat", "email+webhook", "sms", "webhook"]
    lifted = await _admin(api, "PATCH", path, json={"quotas": {"webhook": None, "chat": None}})
    assert lifted.json()["limits"]["quotas"] == {"sms": 5000}
    back = await _admin(api, "PATCH", path, json={"quotas": None, "rate_limit_per_minute": 9})
    assert back.json()["limits"] == {
        "rate_per_minute": 9,
        "quotas": {"chat": 50000, "sms": 5000, "webhook": 15000},
        "priority": None,
    }
    renamed = await _admin(api, "PATCH", path, json={"name": "acme two"})
    assert (renamed.json()["name"], renamed.json()["custom_rate_limit_per_minute"]) == (
        "acme two",
        9,
    )


@pytest.mark.parametrize(
    "body",
    [
        {"quotas": {"fax": 3}},
        {"quotas": {"email+email": 3}},
        {"quotas": {"email": -1}},
        {"quotas": {"email": 1.5}},
        {"rate_limit_per_minute": 0},
        {"plan": "ENTERPRISE"},
        {"unknown": 1},
    ],
)
async def test_bad_changes_are_422(api: httpx.AsyncClient, body: dict[str, Any]) -> None:
    created = await _created(api)
    response = await _admin(api, "PATCH", f"/admin/v1/tenants/{created['id']}", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] in {"validation_error", "invalid_request"}


async def test_suspension_refuses_every_request_until_lifted(
    services: Services, api: httpx.AsyncClient
) -> None:
    created = await _created(api)
    await stored_provider(services, created["id"])
    client = TenantClient(api, created["id"], created["api_key"])
    assert (await client.get("/v1/jobs")).status_code == 200, "now in the auth cache"
    suspended = await _admin(api, "POST", f"/admin/v1/tenants/{created['id']}/suspend")
    assert suspended.json()["suspended"] is True
    for response in (
        await send_email(client),
        await client.get("/v1/jobs"),
        await client.get("/v1/usage"),
        await client.post("/v1/notifications/email/batch", json={"messages": []}),
    ):
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "tenant_suspended"
    await _admin(api, "POST", f"/admin/v1/tenants/{created['id']}/unsuspend")
    assert (await send_email(client)).status_code == 202
