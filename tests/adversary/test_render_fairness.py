"""A tenant flooding the render pool with runaway templates (each holds a worker for
the whole budget, then costs it a restart) does not stand in front of another tenant's
render: the other tenant's render gets the next free worker but one, before most of the
flood, not after all of it. The order is read at the pool's turns, not from the answers'
order, which the accept after a render (a database write) would blur on a loaded
machine."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from homing.rendering import pool as pool_module
from homing.rendering.turns import Turns, W
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


def _send(key: str) -> dict[str, object]:
    return {"to": "a@b.co", "from": "c@d.co", "template": key, "data": {"name": "Ada"}}


class _Logged(Turns[W]):
    """The pool's turns, logging each render's wait for a worker and its getting one."""

    def __init__(self, log: list[tuple[str, str]], *cap: int) -> None:
        super().__init__(*cap)
        self.log = log

    async def get(self, tenant: str) -> W:
        self.log.append(("wait", tenant))
        worker = await super().get(tenant)
        self.log.append(("got", tenant))
        return worker


async def test_a_flood_of_runaway_renders_does_not_queue_in_front_of_another_tenant(
    services: Services, api: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    mallory = await make_tenant(services, api, "mallory", provider=True)
    acme = await make_tenant(services, api, "acme", provider=True)
    log: list[tuple[str, str]] = []
    monkeypatch.setattr(pool_module, "Turns", lambda *cap: _Logged(log, *cap))
    # Writing a version checks it in the pool (which starts it): turns logged from here.
    await _published(mallory, "spin", SPIN)
    await _published(acme, "hello", "Hello {{ name }}")
    log.clear()

    flood = [
        asyncio.ensure_future(mallory.post("/v1/notifications/email", json=_send("spin")))
        for _ in range(FLOOD)
    ]
    # The whole flood is waiting for the one worker (or rendering on it) first.
    async with asyncio.timeout(60):
        while [event for event, _ in log].count("wait") < FLOOD:
            await asyncio.sleep(0.01)
    response = await acme.post("/v1/notifications/email", json=_send("hello"))
    assert response.status_code == 202, response.text
    results = await asyncio.gather(*flood)
    assert {r.json()["error"]["code"] for r in results} == {"template_error"}

    waited, got = ("wait", acme.tenant_id), ("got", acme.tenant_id)
    queued, served = log.index(waited), log.index(got)
    ahead = log[:queued].count(("wait", mallory.tenant_id)) - log[:queued].count(
        ("got", mallory.tenant_id)
    )
    assert ahead >= 2, f"the flood was not waiting in front of acme's render: {log}"
    # In arrival order every runaway render ahead would go first; in turns, at most the
    # one whose turn it already was (one worker).
    assert log[queued:served].count(("got", mallory.tenant_id)) <= 1, log
