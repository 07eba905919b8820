"""Job search input: every filter of ``GET /v1/jobs`` and ``GET /admin/v1/jobs`` is
bounded and checked before it reaches SQL, and no filter reaches another tenant's jobs."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from homing.services import Services
from homing.settings import Settings
from tests.admission_helpers import ADMIN, admission_settings, send_email
from tests.conftest import TenantClient, make_tenant

pytestmark = pytest.mark.sql("hostile search terms in LIKE and JSON queries")


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    """A tenant that can send: an email and an SMS provider stored (a send no provider
    could deliver is refused at accept)."""
    return await make_tenant(services, api, "acme", provider=True)


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return admission_settings(database_url, tmp_path, secret_key)


async def _sent(client: TenantClient, to: str, key: str | None = None) -> str:
    headers = {"Idempotency-Key": key} if key else {}
    response = await send_email(client, json={"to": to}, headers=headers)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


def _refused(response: httpx.Response) -> None:
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] in {"validation_error", "invalid_request"}


async def test_a_huge_to_is_refused_before_it_is_parsed(tenant: TenantClient) -> None:
    await _sent(tenant, "ada@example.com")
    for huge in ("a" * 20_000 + "@example.com", "x@" + "b" * 5_000 + ".com"):
        _refused(await tenant.get("/v1/jobs", params={"to": huge}))
        assert huge not in (await tenant.get("/v1/jobs", params={"to": huge})).text


async def test_a_to_with_two_addresses_is_refused(tenant: TenantClient) -> None:
    await _sent(tenant, "ada@example.com")
    for two in ("ada@example.com, bob@example.com", "ada@example.com;bob@example.com"):
        _refused(await tenant.get("/v1/jobs", params={"to": two}))


async def test_a_display_name_is_searched_as_its_canonical_mailbox(tenant: TenantClient) -> None:
    ada = await _sent(tenant, "Ada Lovelace <ada@example.com>")
    await _sent(tenant, "bob@example.com")
    for to in ("ada@example.com", "Someone <ADA@Example.COM>"):
        response = await tenant.get("/v1/jobs", params={"to": to})
        assert response.status_code == 200, response.text
        assert [j["id"] for j in response.json()["data"]] == [ada]


async def test_bad_dates_and_an_inverted_range_are_refused(tenant: TenantClient) -> None:
    await _sent(tenant, "ada@example.com")
    for params in (
        {"since": "yesterday"},
        {"until": "2026-13-40T00:00:00Z"},
        {"since": "9" * 5_000},
        {"since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"},
        {"since": "0001-01-01T00:00:00+01:00"},
        {"until": "9999-12-31T23:59:59-01:00"},
    ):
        _refused(await tenant.get("/v1/jobs", params=params))


async def test_an_unknown_status_or_channel_is_refused(tenant: TenantClient) -> None:
    for params in ({"status": "DELETED"}, {"channel": "pigeon"}, {"status": "pending' OR 1=1"}):
        _refused(await tenant.get("/v1/jobs", params=params))


async def test_a_limit_out_of_range_is_refused_for_tenants_and_operators(
    tenant: TenantClient, api: httpx.AsyncClient
) -> None:
    for limit in ("0", "201", "-1", "1" * 50):
        _refused(await tenant.get("/v1/jobs", params={"limit": limit}))
        _refused(await api.get("/admin/v1/jobs", params={"limit": limit}, headers=ADMIN))


async def test_a_forged_cursor_is_refused(tenant: TenantClient, api: httpx.AsyncClient) -> None:
    await _sent(tenant, "ada@example.com")
    for forged in ("' OR 1=1 --", "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", "\x00"):
        _refused(await tenant.get("/v1/jobs", params={"cursor": forged}))
        _refused(await api.get("/admin/v1/jobs", params={"cursor": forged}, headers=ADMIN))


async def test_another_tenants_idempotency_key_or_recipient_finds_nothing(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "other", provider=True)
    await _sent(other, "secret@victim.example", key="order-42")
    await _sent(tenant, "ada@example.com", key="mine-1")
    for params in ({"idempotency_key": "order-42"}, {"to": "secret@victim.example"}):
        response = await tenant.get("/v1/jobs", params=params)
        assert response.status_code == 200, response.text
        assert response.json() == {"data": [], "next_cursor": None}


async def test_an_idempotency_key_out_of_bounds_is_refused_not_a_server_error(
    tenant: TenantClient,
) -> None:
    for key in ("k" * 256, ""):
        _refused(await tenant.get("/v1/jobs", params={"idempotency_key": key}))
    # A NUL no database column can hold (PostgreSQL refuses it): no match, or 422.
    response = await tenant.get("/v1/jobs", params={"idempotency_key": "a\x00b"})
    assert response.status_code in {200, 422}, response.text
    if response.status_code == 200:
        assert response.json()["data"] == []
