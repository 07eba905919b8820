"""A tenant flooding the render pool with runaway templates (each holds a worker for
the whole budget, then costs it a restart) does not stand in front of another tenant's
render: the other tenant's templated send is answered at the next free worker, before
most of the flood, not after all of it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant
from tests.fixtures import settings_for

SPIN = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
FLOOD = 6


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        template_render_timeout_seconds=0.5,
        template_render_workers=1,
    )


async def _published(tenant: TenantClient, key: str, text: str) -> None:
    assert (await tenant.post("/v1/templates", json={"key": key})).status_code == 201
    content = {"email": {"subject": "s", "text": text}}
    version = await tenant.post(f"/v1/templates/{key}/versions", json=content)
    assert version.status_code == 201, version.text
    vid = version.json()["id"]
    assert (await tenant.post(f"/v1/templates/{key}/versions/{vid}/publish")).status_code == 200


def _send(tenant: TenantClient, key: str) -> dict[str, object]:
    return {"to": "a@b.co", "from": "c@d.co", "template": key, "data": {"name": "Ada"}}


async def test_a_flood_of_runaway_renders_does_not_queue_in_front_of_another_tenant(
    services: Services, api: httpx.AsyncClient
) -> None:
    mallory = await make_tenant(services, api, "mallory", provider=True)
    acme = await make_tenant(services, api, "acme", provider=True)
    await _published(mallory, "spin", SPIN)
    await _published(acme, "hello", "Hello {{ name }}")
    await services.render_pool.start()
    answered: list[str] = []

    async def post(tenant: TenantClient, key: str, who: str) -> httpx.Response:
        response = await tenant.post("/v1/notifications/email", json=_send(tenant, key))
        answered.append(who)
        return response

    flood = [asyncio.ensure_future(post(mallory, "spin", "mallory")) for _ in range(FLOOD)]
    await asyncio.sleep(0.2)  # the flood is queued for the one worker first
    response = await post(acme, "hello", "acme")
    assert response.status_code == 202, response.text
    results = await asyncio.gather(*flood)
    assert {r.json()["error"]["code"] for r in results} == {"template_error"}
    # In arrival order acme would be answered last; in turns, at the second free worker.
    assert answered.index("acme") <= 2, answered
