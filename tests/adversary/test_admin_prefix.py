"""Mounted under a path prefix, the admin API and the sending rate must guard exactly
as at the root: the guards check the routed path (``scope["path"]`` minus
``root_path``), not the raw one, which an anonymous caller could otherwise walk past."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.types import ASGIApp

from homing.api.app import create_app
from homing.models import Plan
from homing.services import Services
from homing.settings import Settings
from tests.admission_helpers import ADMIN, ADMIN_TOKEN, EMAIL, admission_settings
from tests.conftest import TenantClient, stored_provider

PREFIX = "/x"


@pytest.fixture
def admin_token() -> str | None:
    return ADMIN_TOKEN


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, admin_token: str | None
) -> Settings:
    return admission_settings(database_url, tmp_path, secret_key, admin_token=admin_token)


def _mounted(services: Services) -> ASGIApp:
    return Starlette(routes=[Mount(PREFIX, app=create_app(services))])


@pytest.fixture(params=["mount", "root_path"])
async def prefixed(
    request: pytest.FixtureRequest, services: Services
) -> AsyncIterator[httpx.AsyncClient]:
    """The app under ``/x``: in a Starlette ``Mount``, or served with the ASGI
    ``root_path`` set (as ``uvicorn --root-path /x`` behind a proxy does)."""
    if request.param == "mount":
        transport = httpx.ASGITransport(app=_mounted(services))
    else:
        transport = httpx.ASGITransport(app=create_app(services), root_path=PREFIX)
    async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as client:
        yield client


async def test_a_prefixed_admin_route_without_a_token_is_401(
    prefixed: httpx.AsyncClient,
) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-token"}):
        response = await prefixed.get(f"{PREFIX}/admin/v1/tenants", headers=headers)
        assert response.status_code == 401, response.text
        assert response.json()["error"]["code"] == "unauthenticated"
        created = await prefixed.post(
            f"{PREFIX}/admin/v1/tenants", json={"name": "mallory"}, headers=headers
        )
        assert created.status_code == 401, created.text
    allowed = await prefixed.get(f"{PREFIX}/admin/v1/tenants", headers=ADMIN)
    assert allowed.status_code == 200, "the operator still reaches it with the token"


@pytest.mark.parametrize("admin_token", [None])
async def test_a_prefixed_admin_route_is_404_while_no_token_is_set(
    prefixed: httpx.AsyncClient,
) -> None:
    response = await prefixed.post(f"{PREFIX}/admin/v1/tenants", json={"name": "mallory"})
    assert response.status_code == 404, response.text
    assert response.json()["error"]["code"] == "not_found"
    listed = await prefixed.get(f"{PREFIX}/admin/v1/tenants")
    assert listed.status_code == 404


async def test_the_sending_rate_applies_under_a_prefix(
    services: Services, prefixed: httpx.AsyncClient
) -> None:
    tenant, key = await services.tenants.create("free", Plan.FREE)  # 5 a minute
    await stored_provider(services, tenant.id)
    client = TenantClient(prefixed, tenant.id, key)
    for n in range(5):
        response = await client.post(f"{PREFIX}/v1/notifications/email", json=EMAIL)
        assert response.status_code == 202, response.text
        assert response.headers["RateLimit-Remaining"] == str(4 - n)
    refused = await client.post(f"{PREFIX}/v1/notifications/email", json=EMAIL)
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["code"] == "rate_limited"
    webhook = {"url": "https://example.com/hook", "payload": {"n": 1}}
    also = await client.post(f"{PREFIX}/v1/notifications/webhook", json=webhook)
    assert also.status_code == 429, also.text
