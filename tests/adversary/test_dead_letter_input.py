"""The dead-letter console against hostile input: every filter is bounded, ``q`` is
literal text, bulk requests are capped, another tenant's ids are never touched, and a
test key is refused."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from homing.models import new_id
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import dead_letters
from tests.admission_helpers import admission_settings
from tests.conftest import TenantClient, make_tenant
from tests.dead_letter_helpers import dead_letter


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return admission_settings(database_url, tmp_path, secret_key)


async def test_a_huge_q_is_refused(tenant: TenantClient) -> None:
    response = await tenant.get("/v1/dead-letters", params={"q": "x" * 20_000})
    assert response.status_code == 422, response.text
    body = {"filter": {"q": "x" * 10_000}}
    assert (await tenant.post("/v1/dead-letters/purge", json=body)).status_code == 422


@pytest.mark.parametrize("wildcard", ["%", "_", "\\"])
async def test_like_wildcards_in_q_match_only_themselves(
    services: Services, tenant: TenantClient, wildcard: str
) -> None:
    plain = await dead_letter(services, tenant, error="provider answered 500")
    marked = await dead_letter(services, tenant, error=f"quota at 100{wildcard} now")
    response = await tenant.get("/v1/dead-letters", params={"q": wildcard})
    assert response.status_code == 200, response.text
    assert [d["id"] for d in response.json()["data"]] == [marked]
    assert plain != marked


async def test_ten_thousand_ids_are_refused(services: Services, tenant: TenantClient) -> None:
    letter = await dead_letter(services, tenant)
    ids = [new_id() for _ in range(10_000)]
    response = await tenant.post("/v1/dead-letters/purge", json={"ids": ids})
    assert response.status_code == 422, response.text
    shown = await tenant.get(f"/v1/dead-letters/{letter}")
    assert shown.status_code == 200


@pytest.mark.parametrize("since", ["yesterday", "2026-13-45T00:00:00Z", "1" * 500])
async def test_bad_dates_are_refused(tenant: TenantClient, since: str) -> None:
    response = await tenant.get("/v1/dead-letters", params={"since": since})
    assert response.status_code == 422, response.text
    body = {"filter": {"until": since}, "dry_run": True}
    assert (await tenant.post("/v1/dead-letters/redrive", json=body)).status_code == 422


# Moments that parse but overflow when converted to UTC or stored (hypothesis found the
# first on PostgreSQL: a 500 from the redrive filter).
EDGE_MOMENTS = ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00"]


@pytest.mark.parametrize("moment", EDGE_MOMENTS)
async def test_moments_at_the_edge_of_the_calendar_are_refused(
    tenant: TenantClient, moment: str
) -> None:
    for name in ("since", "until"):
        listed = await tenant.get("/v1/dead-letters", params={name: moment})
        assert listed.status_code == 422, listed.text
        for action in ("redrive", "purge"):
            body = {"filter": {name: moment, "queue": "notifications-email"}, "dry_run": True}
            bulk = await tenant.post(f"/v1/dead-letters/{action}", json=body)
            assert bulk.status_code == 422, bulk.text


async def test_an_empty_filter_without_ids_needs_all(tenant: TenantClient) -> None:
    for action in ("redrive", "purge"):
        response = await tenant.post(f"/v1/dead-letters/{action}", json={"filter": {}})
        assert response.status_code == 422, response.text


async def test_another_tenants_dead_letters_are_never_touched(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "other")
    theirs = await dead_letter(services, other)
    assert (await tenant.get(f"/v1/dead-letters/{theirs}")).status_code == 404
    assert (await tenant.get("/v1/dead-letters")).json()["data"] == []
    for action, done in (("redrive", "redriven"), ("purge", "purged")):
        by_id = await tenant.post(f"/v1/dead-letters/{action}", json={"ids": [theirs]})
        assert by_id.status_code == 200, by_id.text
        assert by_id.json()["matched"] == 0 and by_id.json()[done] == 0
        body = {"filter": {"tenant_id": other.tenant_id}}
        by_filter = await tenant.post(f"/v1/dead-letters/{action}", json=body)
        assert by_filter.json()["matched"] == 0
    async with services.db.transaction() as conn:
        row = (await conn.execute(select(dead_letters).where(dead_letters.c.id == theirs))).one()
    assert row.redriven_at is None


async def test_a_test_key_is_refused(services: Services, tenant: TenantClient) -> None:
    letter = await dead_letter(services, tenant)
    issued = await tenant.post("/v1/api-keys", json={"name": "ci", "test": True})
    test = TenantClient(tenant.api, tenant.tenant_id, issued.json()["key"])
    calls = [
        await test.get("/v1/dead-letters"),
        await test.get(f"/v1/dead-letters/{letter}"),
        await test.post("/v1/dead-letters/redrive", json={"all": True}),
        await test.post("/v1/dead-letters/purge", json={"all": True}),
    ]
    assert [c.status_code for c in calls] == [403] * 4
    assert (await tenant.get(f"/v1/dead-letters/{letter}")).status_code == 200


async def test_show_keeps_webhook_headers_sealed(services: Services, tenant: TenantClient) -> None:
    sealed = "v1:k1:SEALED-HEADERS-BLOB"
    payload = {"url": "https://example.com/hook", "body": "{}", "headers_sealed": sealed}
    letter = await dead_letter(services, tenant, payload=payload)
    shown = await tenant.get(f"/v1/dead-letters/{letter}")
    assert shown.status_code == 200, shown.text
    assert shown.json()["payload"]["headers_sealed"] == "[sealed]"
    assert sealed not in shown.text
