"""The bell (``/feed/bell.js``) in Chromium across a restart of a real ``homing run``,
on SQLite and PostgreSQL (issue #27): the page keeps its bell while the server is
stopped (SIGTERM) or killed (SIGKILL), items are accepted while no stream is open
(through ``Services`` on the same database: the server is down), and once ``homing
run`` is back the bell reconnects by itself with ``Last-Event-ID`` and shows every
item once, with the right unread count; an item sent after the restart arrives live.

The SIGKILL case starts from an empty feed, so the bell's resume has no item of its
own to resume from. The SIGTERM case checks the stop was graceful: the open stream
ended at once, nothing was left for uvicorn's shutdown timeout to cancel.
"""

from __future__ import annotations

import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from homing.api.app import create_app
from homing.clock import ManualClock
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant
from tests.feed_helpers import bell_page, feed_token, put_recipient, sent
from tests.fixtures import serving
from tests.processes import HomingProcess, eventually, free_port, healthy, process_env

# The bell backs off 1, 2, 4, 8 s while the server is down: room for a slow restart.
RECONNECT_MS = 30_000


@pytest.fixture
def clock() -> ManualClock:
    """Now, not the browser tests' fixed moment: the items this process accepts while
    the server is down are stamped like the server's own."""
    return ManualClock(time.time())


@asynccontextmanager
async def _listening(server: HomingProcess, client: httpx.AsyncClient) -> AsyncIterator[None]:
    """``server`` started and answering ``/healthz``; stopped after, whatever happens."""
    server.start()
    try:
        await eventually(lambda: healthy(client), timeout=60, what="homing run to listen")
        yield
    finally:
        server.stop()


@asynccontextmanager
async def _while_down(services: Services, tenant: TenantClient) -> AsyncIterator[TenantClient]:
    """The tenant's API answered by ``services`` in this process, on the server's
    database: a send here wakes no stream of the (stopped) server."""
    transport = httpx.ASGITransport(app=create_app(services))
    async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as api:
        yield TenantClient(api, tenant.tenant_id, tenant.key)


async def _expect_feed(page: Page, bodies: list[str], timeout: float = 5_000) -> None:
    """The bell shows exactly ``bodies`` (newest first), each once, all unread."""
    items = page.locator('[data-homing="item"]')
    await expect(items).to_have_count(len(bodies), timeout=timeout)
    for n, body in enumerate(bodies):
        await expect(items.nth(n)).to_contain_text(body)
    await expect(page.locator('[data-homing="unread"]')).to_have_text(str(len(bodies)))
    ids = await items.evaluate_all("(all) => all.map((li) => li.getAttribute('data-id'))")
    assert len(set(ids)) == len(ids), ids


@pytest.mark.parametrize(
    ("ending", "before"),
    [(signal.SIGTERM, ["first", "second"]), (signal.SIGKILL, [])],
    ids=["sigterm", "sigkill-empty-feed"],
)
async def test_the_bell_misses_nothing_across_a_restart(
    services: Services,
    settings: Settings,
    secret_key: str,
    browser: Browser,
    tmp_path: Path,
    ending: signal.Signals,
    before: list[str],
) -> None:
    port = free_port()
    env = process_env(
        settings, secret_key, HOMING_RUN_WORKER_PROCESSES="0", HOMING_LOG_LEVEL="warning"
    )
    args = ["run", "--host", "127.0.0.1", "--port", str(port)]
    first = HomingProcess(args, env, tmp_path / "run1.log")
    url = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(base_url=url, timeout=30) as live, _listening(first, live):
        tenant = await make_tenant(services, live, "acme")
        await put_recipient(tenant, "user-1")
        for body in before:
            await sent(tenant, "user-1", body=body)
        token = await feed_token(tenant, "user-1")
        async with serving(bell_page(url, token)) as app_url:
            allowed = await tenant.put("/v1/feed-origins", json={"origins": [app_url]})
            assert allowed.status_code == 200, allowed.text
            context = await browser.new_context()
            try:
                page = await context.new_page()
                await page.goto(app_url + "/")
                connected = page.locator(".homing-bell[data-connected]")
                await expect(connected).to_have_count(1)
                await _expect_feed(page, before[::-1])

                _end(first, ending)
                await expect(connected).to_have_count(0)
                async with _while_down(services, tenant) as down:
                    for body in ("down 1", "down 2"):
                        await sent(down, "user-1", body=body)

                second = HomingProcess(args, env, tmp_path / "run2.log")
                async with _listening(second, live):
                    caught_up = ["down 2", "down 1", *before[::-1]]
                    await expect(connected).to_have_count(1, timeout=RECONNECT_MS)
                    await _expect_feed(page, caught_up)
                    await sent(tenant, "user-1", body="live")
                    await _expect_feed(page, ["live", *caught_up])
            finally:
                await context.close()


def _end(server: HomingProcess, ending: signal.Signals) -> None:
    """SIGTERM: a graceful stop, exit 0, the open stream ended at once (uvicorn's
    shutdown timeout cancelled nothing); SIGKILL: a crash."""
    if ending is signal.SIGKILL:
        server.kill()
        return
    assert server.stop() == 0, server.output()
    assert "graceful shutdown exceeded" not in server.output(), server.output()
