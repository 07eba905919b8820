"""A tenant's template previews and version writes are counted on one moving window
(HOMING_TEMPLATE_CHECKS_PER_MINUTE): each takes a render worker for up to the render
budget, so past the rate they are 429 ``rate_limited`` with a ``Retry-After``, whether
by preview, a template's or a layout's version, and another tenant is not counted."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from homing.services import Services
from homing.settings import Settings
from tests.conftest import make_tenant
from tests.fixtures import settings_for

RATE = 4


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        template_checks_per_minute=RATE,
        template_render_workers=1,
    )


def _refused(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    assert response.json()["error"]["code"] == "rate_limited"
    assert int(response.headers["Retry-After"]) >= 1


async def test_previews_and_version_writes_past_the_rate_are_429(
    services: Services, api: httpx.AsyncClient
) -> None:
    mallory = await make_tenant(services, api, "mallory")
    acme = await make_tenant(services, api, "acme")
    await mallory.post("/v1/templates", json={"key": "t"})
    await mallory.post("/v1/layouts", json={"key": "brand"})
    content = {"sms": {"body": "Hi {{ name }}"}}
    added = await mallory.post("/v1/templates/t/versions", json=content)  # 1
    assert added.status_code == 201, added.text
    vid = added.json()["id"]
    assert (await mallory.patch(f"/v1/templates/t/versions/{vid}", json=content)).status_code == 200
    layout = await mallory.post("/v1/layouts/brand/versions", json={"html": "{{ content }}"})
    assert layout.status_code == 201, layout.text  # 3
    preview = {"data": {"name": "Ada"}, "version": 1}
    assert (await mallory.post("/v1/templates/t/preview", json=preview)).status_code == 200
    # The window is full: every kind of request that takes a worker is refused now.
    _refused(await mallory.post("/v1/templates/t/preview", json=preview))
    _refused(await mallory.post("/v1/templates/t/versions", json=content))
    _refused(await mallory.patch(f"/v1/templates/t/versions/{vid}", json=content))
    _refused(await mallory.post("/v1/layouts/brand/versions", json={"html": "{{ content }}"}))
    # Reading is not counted, nor is another tenant.
    assert (await mallory.get("/v1/templates/t/versions")).status_code == 200
    await acme.post("/v1/templates", json={"key": "t"})
    assert (await acme.post("/v1/templates/t/versions", json=content)).status_code == 201
