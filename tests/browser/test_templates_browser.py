"""The Templates pages in a real browser: add a template, edit its draft (a syntax
error shown beside its field with what was typed kept), preview it in the sandboxed
frame, publish it, see its versions and a diff, and send a test that the sandbox's
vendor receives rendered (inside the tenant's default layout)."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect

from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.browser.conftest import shoot
from tests.browser.test_console_browser import sign_in
from tests.conftest import TenantClient
from tests.console_helpers import add_user
from tests.e2e.conftest import deliver, register
from tests.fixtures import Sandbox


async def _default_layout(tenant: TenantClient) -> None:
    await tenant.post("/v1/layouts", json={"key": "default"})
    html = '<div class="frame">Acme frame {{ content }}</div>'
    version = (await tenant.post("/v1/layouts/default/versions", json={"html": html})).json()
    published = await tenant.post(f"/v1/layouts/default/versions/{version['id']}/publish")
    assert published.status_code == 200, published.text


async def test_create_a_draft_preview_publish_and_send_a_test(
    page: Page,
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    shots: Path,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await _default_layout(tenant)
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await sign_in(page, "owner@acme.example", f"/t/{tenant.tenant_id}/")
    await page.get_by_role("navigation").get_by_role("link", name="Templates").click()
    await expect(page.get_by_text("No template yet.")).to_be_visible()
    await page.get_by_label("Key").fill("Not A Key")
    await page.get_by_role("button", name="Add template").click()
    await expect(page.get_by_role("alert")).to_be_visible()
    await expect(page.get_by_label("Key")).to_have_value("Not A Key")
    await page.get_by_label("Key").fill("welcome")
    await page.get_by_label("Name").fill("Welcome mail")
    await page.get_by_role("button", name="Add template").click()
    await expect(page.get_by_role("heading", name="Welcome mail")).to_be_visible()
    await page.get_by_role("button", name="New draft").click()
    await expect(page.get_by_role("heading", name="Version 1")).to_be_visible()

    # A syntax error is shown beside the HTML field, with what was typed kept.
    broken = "<p>Hello {{ name </p>"
    await page.locator("#email_html").fill(broken)
    await page.get_by_role("button", name="Save draft").click()
    await expect(page.locator("#email_html-error")).to_contain_text("syntax error")
    await expect(page.locator("#email_html")).to_have_value(broken)

    await page.locator("#email_subject").fill("Hi {{ name }}")
    await page.locator("#email_html").fill("<p>Hello <b>{{ name }}</b></p>")
    await page.locator("#data").fill('{"name": "<Ann>"}')
    await page.get_by_role("button", name="Preview").click()
    await expect(page.locator("[data-part=subject]")).to_have_text("Hi <Ann>")
    frame = page.frame_locator("iframe.body")
    await expect(frame.locator("b")).to_have_text("<Ann>")
    await expect(frame.locator("div.frame")).to_contain_text("Acme frame")
    await shoot(page, shots, "console-template-preview")

    await page.get_by_role("button", name="Publish").click()
    await expect(page.locator("h1 .state-published")).to_have_text("published")
    await page.locator("#data").fill('{"name": "Ada"}')
    await page.get_by_label("Send a test to").fill("ada@example.com")
    await page.get_by_label("From", exact=True).fill("hello@acme.example")
    await page.get_by_role("button", name="Send test").click()
    await expect(page.get_by_text("Test sent to ada@example.com.")).to_be_visible()
    assert await deliver(services) == 1
    [message] = await sb.messages("resend")
    assert message["to"] in ("ada@example.com", ["ada@example.com"])
    assert message["subject"] == "Hi Ada"
    assert "Acme frame" in message["html"] and "<b>Ada</b>" in message["html"]

    # A second draft, and the diff between the two versions.
    await page.get_by_role("link", name="Welcome mail").click()
    await page.get_by_role("button", name="New draft").click()
    await page.locator("#email_subject").fill("Welcome {{ name }}")
    await page.get_by_role("button", name="Save draft").click()
    await expect(page.get_by_text("Draft 2 saved.")).to_be_visible()
    await page.get_by_role("link", name="Welcome mail").click()
    await expect(page.locator("tbody tr")).to_have_count(2)
    await page.get_by_role("button", name="Compare").click()
    diff = page.locator("[data-part=diff]")
    await expect(diff.locator(".diff-del")).to_contain_text(["Hi {{ name }}"])
    await expect(diff.locator(".diff-add")).to_contain_text(["Welcome {{ name }}"])
