"""The bell (``/feed/bell.js``) in Chromium, on a page of another loopback origin the
tenant allows: it shows the feed and its unread count, an item sent through the API
appears without a reload (the stream), and clicking an item marks it read. Item text
that looks like markup stays text."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from playwright.async_api import Browser, expect

from homing.services import Services
from tests.conftest import make_tenant
from tests.feed_helpers import bell_page, feed_token, put_recipient, sent
from tests.fixtures import serving


@pytest.fixture
async def client(site: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=site, timeout=10) as live:
        yield live


async def test_the_bell_shows_new_items_live_and_marks_them_read(
    services: Services, browser: Browser, site: str, client: httpx.AsyncClient
) -> None:
    tenant = await make_tenant(services, client, "acme")
    await put_recipient(tenant, "user-1")
    await sent(tenant, "user-1", title="<b>Welcome</b>", body="<img src=x onerror=alert(1)>")
    token = await feed_token(tenant, "user-1")
    async with serving(bell_page(site, token)) as app_url:
        allowed = await tenant.put("/v1/feed-origins", json={"origins": [app_url]})
        assert allowed.status_code == 200, allowed.text
        context = await browser.new_context()
        try:
            page = await context.new_page()
            await page.goto(app_url + "/")
            unread = page.locator('[data-homing="unread"]')
            await expect(unread).to_have_text("1")
            await expect(page.locator(".homing-bell[data-connected]")).to_have_count(1)
            first = page.locator('[data-homing="item"]').first
            await expect(first).to_contain_text("<img src=x onerror=alert(1)>")
            await expect(page.locator(".homing-bell img, .homing-bell b")).to_have_count(0)

            await sent(tenant, "user-1", title="Report ready", body="March is in")
            await expect(unread).to_have_text("2")
            items = page.locator('[data-homing="item"]')
            await expect(items).to_have_count(2)
            await expect(items.first).to_contain_text("Report ready")

            await page.locator('[data-homing="bell"]').click()
            await items.first.click()
            await expect(unread).to_have_text("1")
            await expect(items.first).not_to_have_attribute("data-unread", "true")
            feed = await tenant.get("/v1/recipients/user-1/feed")
            assert feed.json()["unread_count"] == 1
        finally:
            await context.close()
