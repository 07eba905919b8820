"""The Layouts pages in a real browser: add a layout from the sidebar, start a draft,
edit it (a layout without ``{{ content }}`` refused beside its field with what was typed
kept), preview it around a sample email in the sandboxed frame, publish it, and see the
template it frames on the layout's page."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect

from homing.models import Role
from homing.services import Services
from tests.browser.conftest import shoot
from tests.browser.test_console_browser import sign_in
from tests.conftest import TenantClient
from tests.console_helpers import add_user
from tests.e2e.test_templates import make_template, publish


async def test_add_edit_preview_and_publish_a_layout(
    page: Page, services: Services, tenant: TenantClient, shots: Path
) -> None:
    await make_template(tenant, "welcome")
    email = {"subject": "Hi", "html": "<p>Hello</p>", "layout": "brand"}
    await publish(tenant, "welcome", email=email)
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await sign_in(page, "owner@acme.example", f"/t/{tenant.tenant_id}/")
    await page.get_by_role("navigation").get_by_role("link", name="Layouts").click()
    await expect(page.get_by_text("No layout yet")).to_be_visible()
    await page.get_by_label("Key").fill("brand")
    await page.get_by_label("Name").fill("Brand frame")
    await page.get_by_role("button", name="Add layout").click()
    await expect(page.get_by_role("heading", name="Brand frame")).to_be_visible()
    await expect(page.get_by_role("link", name="welcome")).to_be_visible()
    await page.get_by_role("button", name="New draft").click()
    await expect(page.get_by_role("heading", name="Version 1")).to_be_visible()

    # A layout that never shows the content is refused beside the HTML, typed kept.
    slotless = "<div>Acme</div>"
    await page.locator("#html").fill(slotless)
    await page.get_by_role("button", name="Save draft").click()
    await expect(page.locator("#html-error")).to_contain_text("{{ content }}")
    await expect(page.locator("#html")).to_have_value(slotless)

    framed = '<div class="frame"><p class="brand">Acme {{ brand }}</p>{{ content }}</div>'
    await page.locator("#html").fill(framed)
    await page.locator("#data").fill('{"brand": "<Co>"}')
    await page.get_by_role("button", name="Preview").click()
    frame = page.frame_locator("iframe.body")
    await expect(frame.locator("p.brand")).to_have_text("Acme <Co>")
    await expect(frame.locator("div.frame h1")).to_have_text("A sample heading")
    await expect(frame.locator("script")).to_have_count(0)
    await shoot(page, shots, "console-layout-preview")

    await page.get_by_role("button", name="Publish").click()
    await expect(page.locator("h1 .state-published")).to_have_text("published")
    await expect(page.get_by_text("Version 1 published: emails use it now.")).to_be_visible()
    await expect(page.locator("#html")).to_have_attribute("readonly", "")
    await page.get_by_role("link", name="Brand frame").click()
    await expect(page.locator("tbody tr")).to_have_count(1)
    await page.get_by_role("navigation").get_by_role("link", name="Layouts").click()
    await expect(page.locator("tbody tr td").nth(2)).to_have_text("1 (en)")
