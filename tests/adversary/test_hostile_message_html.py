"""A hostile HTML email body shown on the console's message page runs nothing and
fetches nothing: in Debian's Chromium (Playwright), a body with script tags, event
handlers, remote and loopback images, style sheets, a meta refresh, a nested frame, a
form, and text that tries to close the frame or break out of its ``srcdoc`` quotes
fires no dialog and no console message, and makes no request but the console's own
page and files. The body still shows, as text and markup in the sandboxed frame.

The traps are a real receiver on loopback: any request the body made to it is
recorded there as well as seen by the browser."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import (
    Browser,
    ConsoleMessage,
    Dialog,
    Page,
    Request,
    async_playwright,
    expect,
)

from homing.api.app import create_app
from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.browser.test_console_browser import sign_in
from tests.conftest import TenantClient, deliver
from tests.console_helpers import add_user
from tests.e2e.conftest import register, send
from tests.fixtures import serving, settings_for
from tests.webhooks.receiver import Receiver

# How Chromium words a refusal on the console: a sandbox's or a policy's.
REFUSED = re.compile(
    r"^(Blocked (script execution|form submission)|Refused to execute|"
    r"(Loading|Framing|Running) .* violates the following Content Security Policy)"
)


# How Playwright names a request the browser refused before sending it.
BLOCKED = frozenset({"csp", "net::ERR_BLOCKED_BY_CSP", "net::ERR_BLOCKED_BY_CLIENT"})


def hostile(trap: str) -> str:
    """A body that tries every way out of the frame, each aimed at ``trap``."""
    return f"""<p id="marker" style="color: rgb(1, 2, 3)">Hostile body</p>
<script>console.log("hostile script ran"); alert("script")</script>
<img src="x" onerror="alert('onerror')">
<img src="{trap}/loopback.png" alt="loopback">
<img src="https://tracker.example/pixel.gif" alt="remote">
<svg onload="alert('svg')"><image href="{trap}/svg-image.png"/></svg>
<link rel="stylesheet" href="{trap}/link.css">
<style>@import url({trap}/import.css); p {{ background: url({trap}/bg.png) }}</style>
<meta http-equiv="refresh" content="0;url={trap}/refresh">
<iframe src="{trap}/nested"></iframe>
<object data="{trap}/object"></object>
<video src="{trap}/video.mp4" autoplay></video>
<form action="{trap}/form" method="post"><input name="a" value="b">
<button id="go">Go</button></form>
</iframe><script>alert("closed the frame")</script><img src="{trap}/after-frame.png">
"><script>alert("double quote")</script>
' onload='alert("single quote")' x='
&quot; onload=&quot;alert('entity quote')&quot;
<a id="link" href="javascript:alert('link')">a link</a>
"""


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(database_url, tmp_path, secret_key)


@pytest.fixture
async def chromium() -> AsyncIterator[Browser]:
    assert CHROMIUM.exists(), f"Chromium is needed at {CHROMIUM}: apt-get install chromium"
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def console_page(chromium: Browser, services: Services) -> AsyncIterator[Page]:
    async with serving(create_app(services)) as site:
        context = await chromium.new_context(base_url=site)
        try:
            yield await context.new_page()
        finally:
            await context.close()


async def test_a_hostile_html_body_runs_no_script_and_fetches_nothing(
    console_page: Page,
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    receiver: Receiver,
) -> None:
    page = console_page
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(
        tenant, subject="<script>alert('subject')</script>", html=hostile(receiver.url)
    )
    assert await deliver(services) == 1
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await sign_in(page, "owner@acme.example")
    dialogs: list[Dialog] = []
    said: list[ConsoleMessage] = []
    requests: list[Request] = []
    page.on("dialog", lambda d: dialogs.append(d))
    page.on("console", lambda m: said.append(m))
    page.on("request", lambda r: requests.append(r))
    message = f"/t/{tenant.tenant_id}/messages/{job_id}"
    await page.goto(message, wait_until="load")
    body = page.frame_locator("iframe.body")
    await expect(body.locator("#marker")).to_have_text("Hostile body")
    # The email's own inline style still applies: the frame is a mail reader, not a blank.
    await expect(body.locator("#marker")).to_have_css("color", "rgb(1, 2, 3)")
    await expect(page.get_by_role("heading", level=1)).to_have_text(
        "<script>alert('subject')</script>"
    )
    # Try the form and the link too, then load another page: whatever they set off
    # would have been requested before it.
    await body.locator("#go").click()
    await body.locator("#link").click()
    await page.goto(f"/t/{tenant.tenant_id}/messages", wait_until="load")
    site = page.url.split("/t/", 1)[0]
    own = {message, "/static/console.css", "/static/console.js", f"/t/{tenant.tenant_id}/messages"}
    # Chromium names a few fetches before their policy refuses them (a style sheet's
    # @import, an image after the frame's end): each of those failed, blocked, and
    # reached nothing; every other request was one of the console's own.
    left = [r for r in requests if r.url.removeprefix(site) not in own]
    assert [(r.url, r.failure) for r in left if r.failure not in BLOCKED] == []
    assert {r.url.removeprefix(site) for r in requests} - own == {r.url for r in left}
    assert receiver.requests == []
    # Chromium reports each refusal on the console (as an error); nothing else is said.
    assert dialogs == []
    assert [m.text for m in said if m.type != "error" or not REFUSED.search(m.text)] == []
