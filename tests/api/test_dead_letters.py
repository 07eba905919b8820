"""The dead-letter console: filters, pages, show, redrive (once, under quota), purge."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from homing.models import Plan
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import dead_letters, queue_entries
from tests.admission_helpers import ADMIN, admission_settings
from tests.conftest import TenantClient, make_tenant
from tests.dead_letter_helpers import dead_letter


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return admission_settings(database_url, tmp_path, secret_key)


async def _ids(tenant: TenantClient, **params: str) -> list[str]:
    response = await tenant.get("/v1/dead-letters", params=params)
    assert response.status_code == 200, response.text
    return [d["id"] for d in response.json()["data"]]


async def _entries(services: Services) -> int:
    async with services.db.transaction() as conn:
        return int(
            (await conn.execute(select(func.count()).select_from(queue_entries))).scalar_one()
        )


async def test_filters_and_newest_first(services: Services, tenant: TenantClient) -> None:
    day = datetime(2026, 5, 1, tzinfo=UTC)
    old = await dead_letter(services, tenant, provider="ses", error="SES throttled", at=day)
    new = await dead_letter(
        services, tenant, provider="postmark", error_class="timeout", at=day + timedelta(days=1)
    )
    assert await _ids(tenant) == [new, old]
    assert await _ids(tenant, provider="ses") == [old]
    assert await _ids(tenant, error_class="timeout") == [new]
    assert await _ids(tenant, q="ses THROTTLED") == [old]
    assert await _ids(tenant, since=(day + timedelta(hours=1)).isoformat()) == [new]
    assert await _ids(tenant, until=(day + timedelta(hours=1)).isoformat()) == [old]
    listed = (await tenant.get("/v1/dead-letters")).json()["data"][0]
    assert listed["provider"] == "postmark" and listed["redriven_at"] is None


async def test_pages_follow_the_cursor(services: Services, tenant: TenantClient) -> None:
    made = [await dead_letter(services, tenant) for _ in range(5)]
    seen: list[str] = []
    cursor: str | None = None
    while True:
        params = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        body = (await tenant.get("/v1/dead-letters", params=params)).json()
        seen += [d["id"] for d in body["data"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == list(reversed(made))


async def test_show_has_the_payload_attempts_and_error(
    services: Services, tenant: TenantClient
) -> None:
    letter = await dead_letter(services, tenant, error="boom")
    shown = await tenant.get(f"/v1/dead-letters/{letter}")
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert body["error"] == "boom" and body["payload"] == {"subject": "Welcome"}
    assert body["attempts"] == []


@pytest.mark.sql("two redrives at once: the database's row lock picks one")
async def test_two_concurrent_redrives_requeue_once(
    services: Services, tenant: TenantClient
) -> None:
    letter = await dead_letter(services, tenant)
    body = {"ids": [letter]}
    first, second = await asyncio.gather(
        tenant.post("/v1/dead-letters/redrive", json=body),
        tenant.post("/v1/dead-letters/redrive", json=body),
    )
    assert first.status_code == second.status_code == 200
    assert first.json()["redriven"] + second.json()["redriven"] == 1
    assert await _entries(services) == 1
    again = await tenant.post("/v1/dead-letters/redrive", json=body)
    assert again.json() == {"matched": 0, "redriven": 0, "refused": 0, "uncertain": 0}
    listed = (await tenant.get("/v1/dead-letters")).json()["data"][0]
    assert listed["redriven_at"] is not None


async def test_dry_run_counts_and_changes_nothing(services: Services, tenant: TenantClient) -> None:
    for _ in range(3):
        await dead_letter(services, tenant, provider="ses")
    await dead_letter(services, tenant, provider="postmark")
    body = {"filter": {"provider": "ses"}, "dry_run": True}
    dry = await tenant.post("/v1/dead-letters/redrive", json=body)
    assert dry.json() == {"matched": 3, "redriven": 0, "refused": 0, "uncertain": 0}
    assert await _entries(services) == 0
    real = await tenant.post("/v1/dead-letters/redrive", json={**body, "dry_run": False})
    assert real.json() == {"matched": 3, "redriven": 3, "refused": 0, "uncertain": 0}
    assert await _entries(services) == 3


async def test_redrive_counts_the_quota(services: Services, api: httpx.AsyncClient) -> None:
    capped = await make_tenant(
        services, api, "capped", Plan.FREE, quota_overrides={"email+webhook": 3}, provider=True
    )
    letters = [await dead_letter(services, capped) for _ in range(2)]
    # Two sends used two units of three: one redrive fits, the other is refused.
    result = await capped.post("/v1/dead-letters/redrive", json={"ids": letters})
    assert result.json() == {"matched": 2, "redriven": 1, "refused": 1, "uncertain": 0}


async def test_purge_deletes_rows_and_keeps_jobs(services: Services, tenant: TenantClient) -> None:
    letter = await dead_letter(services, tenant)
    job_id = (await tenant.get(f"/v1/dead-letters/{letter}")).json()["job_id"]
    dry = await tenant.post("/v1/dead-letters/purge", json={"ids": [letter], "dry_run": True})
    assert dry.json() == {"matched": 1, "purged": 0}
    done = await tenant.post("/v1/dead-letters/purge", json={"all": True})
    assert done.json() == {"matched": 1, "purged": 1}
    assert await _ids(tenant) == []
    assert (await tenant.get(f"/v1/jobs/{job_id}")).json()["status"] == "FAILED"


async def test_the_admin_api_sees_and_filters_every_tenant(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "other", provider=True)
    mine, theirs = await dead_letter(services, tenant), await dead_letter(services, other)
    every = await api.get("/admin/v1/dead-letters", headers=ADMIN)
    assert [d["id"] for d in every.json()["data"]] == [theirs, mine]
    one = await api.get(
        "/admin/v1/dead-letters", headers=ADMIN, params={"tenant_id": other.tenant_id}
    )
    assert [d["id"] for d in one.json()["data"]] == [theirs]
    shown = await api.get(f"/admin/v1/dead-letters/{mine}", headers=ADMIN)
    assert shown.status_code == 200
    body = {"filter": {"tenant_id": other.tenant_id}}
    redriven = await api.post("/admin/v1/dead-letters/redrive", headers=ADMIN, json=body)
    assert redriven.json() == {"matched": 1, "redriven": 1, "refused": 0, "uncertain": 0}
    purged = await api.post("/admin/v1/dead-letters/purge", headers=ADMIN, json={"all": True})
    assert purged.json() == {"matched": 2, "purged": 2}
    async with services.db.transaction() as conn:
        left = (await conn.execute(select(func.count()).select_from(dead_letters))).scalar_one()
    assert left == 0
