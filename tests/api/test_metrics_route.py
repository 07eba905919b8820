"""``GET /metrics`` on the API: no tenant key, ``HOMING_METRICS_TOKEN`` when it is set
(without one, every scrape of tests/e2e/test_metrics.py is let in)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from homing.api.app import create_app
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.fixtures import settings_for
from tests.metrics_helpers import scrape

TOKEN = "scrape-token-9876543210"


async def test_the_scrape_needs_the_metrics_token_not_a_tenant_key(
    api: httpx.AsyncClient,
) -> None:
    text = await scrape(api, headers={"Authorization": f"Bearer {TOKEN}"})
    assert "# TYPE homing_notifications_accepted_total counter" in text
    assert "# TYPE homing_queue_depth gauge" in text


@pytest.fixture
def token_settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(database_url, tmp_path, secret_key, metrics_token=TOKEN)


@pytest.fixture
def settings(token_settings: Settings) -> Settings:
    return token_settings


@pytest.fixture
async def guarded(services: Services) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(services))
    async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as client:
        yield client


async def test_with_a_token_the_scrape_is_401_without_it(
    guarded: httpx.AsyncClient, tenant: TenantClient
) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, tenant.headers):
        refused = await guarded.get("/metrics", headers=headers)
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "unauthenticated"
        assert TOKEN not in refused.text
    await scrape(guarded, headers={"Authorization": f"Bearer {TOKEN}"})
