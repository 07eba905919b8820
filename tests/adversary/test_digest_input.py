"""A hostile tenant against digests (docs/notifications.md, "Digests"): keys that are
too long or carry unsafe characters (a megabyte of them checked in linear time),
windows outside a minute to a week, malformed daily times, both or neither close,
item data over its bound. Each is refused with 422 before anything is stored. A
tenant flooding one key fills a window up to its item bound and the next one opens;
a tenant flooding many keys cannot hold another tenant's digest back: one sweep sends
a bounded number of digests, a bounded number of one tenant's, the other tenant's in
the first pass."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from homing.api.digest_plans import planner
from homing.clock import ManualClock
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.notifications import digests, notifications
from tests.conftest import TenantClient, make_tenant
from tests.e2e.test_templates import make_template, publish
from tests.feed_helpers import put_recipient
from tests.fixtures import settings_for

IN_APP = {"title": "{{ count }} new", "body": "{% for i in items %}{{ i.n }} {% endfor %}"}
MAX_ITEMS = 3
BATCH = 4
PER_TENANT = 2


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        digest_max_items=MAX_ITEMS,
        digest_sweep_batch=BATCH,
        digest_sweep_per_tenant=PER_TENANT,
    )


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    return await make_tenant(services, api, "acme", provider=True)


async def _ready(tenant: TenantClient) -> None:
    await put_recipient(tenant, "user-1")
    await make_template(tenant, "digest")
    await publish(tenant, "digest", in_app=IN_APP)


def _body(digest: Any, **fields: Any) -> dict[str, Any]:
    body = {
        "recipient": "user-1",
        "template": "digest",
        "data": {"n": 1},
        "channels": ["in_app"],
        "strategy": "all",
        "digest": digest,
    }
    return {**body, **fields}


async def _count(services: Services, table: Any) -> int:
    async with services.db.transaction() as conn:
        return int((await conn.execute(select(func.count()).select_from(table))).scalar_one())


@pytest.mark.parametrize(
    "digest",
    [
        {"key": "k" * 65, "window_seconds": 3600},
        {"key": "", "window_seconds": 3600},
        {"key": "a b", "window_seconds": 3600},
        {"key": "../etc", "window_seconds": 3600},
        {"key": "<script>", "window_seconds": 3600},
        {"key": "café", "window_seconds": 3600},
        {"key": "k\u0000", "window_seconds": 3600},
        {"key": "k", "window_seconds": 59},
        {"key": "k", "window_seconds": 7 * 86_400 + 1},
        {"key": "k", "window_seconds": -1},
        {"key": "k", "window_seconds": "3600"},
        {"key": "k", "window_seconds": 3600.5},
        {"key": "k", "window_seconds": 3600, "at": "09:00"},
        {"key": "k"},
        {"key": "k", "at": "24:00"},
        {"key": "k", "at": "9:00"},
        {"key": "k", "at": "09:00:00"},
        {"key": "k", "at": "09:60"},
        {"key": "k", "at": 900},
        {"key": "k", "window_seconds": 3600, "extra": 1},
        {"window_seconds": 3600},
        "comments",
    ],
)
async def test_a_malformed_digest_is_refused_and_nothing_is_stored(
    services: Services, tenant: TenantClient, digest: Any
) -> None:
    await _ready(tenant)
    response = await tenant.post("/v1/notifications", json=_body(digest))
    assert response.status_code == 422, response.text
    assert await _count(services, digests) == 0
    assert await _count(services, notifications) == 0


async def test_a_megabyte_key_is_refused_in_linear_time(
    services: Services, tenant: TenantClient
) -> None:
    await _ready(tenant)
    hostile = "a" * 500_000 + "!"  # a backtracking pattern would crawl here
    started = time.perf_counter()
    response = await tenant.post(
        "/v1/notifications", json=_body({"key": hostile, "window_seconds": 60})
    )
    assert response.status_code in (413, 422), response.text
    assert time.perf_counter() - started < 2.0
    assert await _count(services, digests) == 0


async def test_item_data_over_its_bound_is_refused(
    services: Services, tenant: TenantClient, settings: Settings
) -> None:
    await _ready(tenant)
    big = {"blob": "x" * settings.templates.max_data_bytes}
    response = await tenant.post(
        "/v1/notifications", json=_body({"key": "k", "window_seconds": 60}, data=big)
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"]["details"]["field"] == "data"
    assert await _count(services, digests) == 0


async def test_a_flooded_key_fills_a_window_and_the_next_one_opens(
    services: Services, tenant: TenantClient
) -> None:
    await _ready(tenant)
    placed = []
    for n in range(2 * MAX_ITEMS + 1):
        response = await tenant.post(
            "/v1/notifications",
            json=_body({"key": "flood", "window_seconds": 600}, data={"n": n}),
        )
        assert response.status_code == 202, response.text
        digest = response.json()["digest"]
        placed.append((digest["id"], digest["position"]))
    windows = list(dict.fromkeys(d for d, _ in placed))
    assert len(windows) == 3
    assert [p for _, p in placed] == [0, 1, 2, 0, 1, 2, 0]


async def test_a_tenant_flooding_keys_cannot_hold_back_another_tenants_digest(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient, clock: ManualClock
) -> None:
    await _ready(tenant)
    for n in range(10):
        response = await tenant.post(
            "/v1/notifications", json=_body({"key": f"flood-{n}", "window_seconds": 60})
        )
        assert response.status_code == 202, response.text
    clock.advance(1)  # the victim's window closes after the flood's
    victim = await make_tenant(services, api, "victim", provider=True)
    await _ready(victim)
    mine = await victim.post("/v1/notifications", json=_body({"key": "mine", "window_seconds": 60}))
    assert mine.status_code == 202, mine.text
    clock.advance(60)
    plan = planner(services)
    first = await services.digests.sweep(plan)
    assert first == PER_TENANT + 1  # the flood's turn is bounded; the victim's is in
    seen = await victim.get(f"/v1/notifications/{mine.json()['id']}")
    assert seen.json()["digest"]["status"] == "sent"
    passes = [first]
    while passes[-1]:
        passes.append(await services.digests.sweep(plan))
    assert max(passes) <= BATCH
    assert sum(passes) == 11
