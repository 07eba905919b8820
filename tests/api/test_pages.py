"""Every list answers one page shape, ``{"data": [...], "next_cursor": ...}``."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from homing.settings import Settings
from tests.admission_helpers import ADMIN, admission_settings
from tests.conftest import TenantClient

pytestmark = pytest.mark.sql("keyset cursors over each list")

TENANT_LISTS = [
    "/v1/providers",
    "/v1/api-keys",
    "/v1/webhook-endpoints/gone",
    "/v1/jobs",
    "/v1/suppressions",
    "/v1/domains",
]


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return admission_settings(database_url, tmp_path, secret_key)


@pytest.mark.parametrize("path", TENANT_LISTS)
async def test_every_tenant_list_is_one_page_shape(tenant: TenantClient, path: str) -> None:
    response = await tenant.get(path)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"data", "next_cursor"}
    assert isinstance(body["data"], list)


async def test_the_admin_tenant_list_and_the_event_report_are_pages(
    tenant: TenantClient, api: httpx.AsyncClient
) -> None:
    tenants = (await api.get("/admin/v1/tenants", headers=ADMIN)).json()
    assert set(tenants) == {"data", "next_cursor"} and tenants["data"]
    report = (await tenant.get("/v1/reports/events")).json()
    assert set(report) == {"data", "next_cursor", "hours"}


async def test_the_openapi_lists_share_one_page_schema(api: httpx.AsyncClient) -> None:
    paths = (await api.get("/openapi.json")).json()["paths"]
    for path in [*TENANT_LISTS, "/admin/v1/tenants"]:
        schema = paths[path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert schema["$ref"].startswith("#/components/schemas/Page_"), (path, schema)
