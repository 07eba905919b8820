"""Send a test in a real browser: from the sidebar, a refused address is shown beside
its field with what was typed kept (and passes axe), then the fixed form lands on the
message's page with its flash, and the sandbox's vendor receives the message."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect

from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.browser.axe import violations
from tests.browser.conftest import shoot
from tests.browser.test_console_browser import sign_in
from tests.conftest import TenantClient
from tests.console_helpers import add_user
from tests.e2e.conftest import deliver, register


async def test_a_refused_test_is_fixed_in_place_and_then_delivered(
    page: Page, services: Services, tenant: TenantClient, sandbox: SandboxServer, shots: Path
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await sign_in(page, "owner@acme.example", f"/t/{tenant.tenant_id}/")
    await page.get_by_role("navigation").get_by_role("link", name="Send a test").click()
    await expect(page.get_by_role("heading", name="Send a test")).to_be_visible()
    await expect(page.get_by_text("SMS", exact=True)).to_have_attribute("aria-disabled", "true")

    await page.get_by_label("To", exact=True).fill("ada@")
    await page.get_by_label("From").fill("Acme <hello@acme.example>")
    await page.get_by_label("Subject").fill("Trying Homing")
    await page.get_by_label("Text", exact=True).fill("It works")
    # The browser's own check of type=email would stop the post: the server's is tested.
    await page.locator("form.editor").evaluate("f => f.noValidate = true")
    await page.get_by_role("button", name="Send test").click()
    await expect(page.locator("#to-error")).to_contain_text("Type one address")
    await expect(page.locator("#to")).to_have_value("ada@")
    await expect(page.get_by_label("Subject")).to_have_value("Trying Homing")
    assert await violations(page) == []
    await shoot(page, shots, "console-send-test-refused")

    await page.locator("#to").fill("ada@example.com")
    await page.get_by_role("button", name="Send test").click()
    await expect(page.get_by_text("Test queued on email")).to_be_visible()
    assert f"/t/{tenant.tenant_id}/messages/" in page.url
    assert await deliver(services) == 1
    [message] = sandbox.state.messages("resend")
    assert message.to == ("ada@example.com",) and message.subject == "Trying Homing"
