"""The tenant's provider and suppression pages in a real browser: add a provider in two
steps (vendor, then credentials checked with the sandbox) and see it listed; remove a
suppression and see it gone."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect

from homing.channels import Channel
from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.browser.conftest import shoot
from tests.browser.test_console_browser import sign_in
from tests.conftest import TenantClient
from tests.console_helpers import add_user

KEY = "re_browser_key_5d1c9e"


async def test_add_a_provider_and_see_it_listed(
    page: Page, services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await sign_in(page, "owner@acme.example", f"/t/{tenant.tenant_id}/providers")
    await expect(page.get_by_text("No provider yet.")).to_be_visible()
    await page.get_by_role("link", name="Add a provider").click()
    await page.get_by_label("Provider").select_option("resend")
    await page.get_by_role("button", name="Next: its credentials").click()
    await expect(page.get_by_text("A resend account for the email channel.")).to_be_visible()
    await page.get_by_label("API key").fill("re_invalid_key")
    await page.get_by_label("API base URL").fill(sandbox.provider_base_url("resend"))
    await page.get_by_role("button", name="Check and add").click()
    await expect(page.get_by_role("alert")).to_contain_text("Resend rejected the API key")
    await expect(page.get_by_label("API key")).to_have_value("")
    await page.get_by_label("API key").fill(KEY)
    await page.get_by_role("button", name="Check and add").click()
    await expect(page.get_by_role("heading", name="Providers")).to_be_visible()
    row = page.locator("tbody tr").first
    await expect(row).to_contain_text("resend")
    await expect(row).to_contain_text("api_key=")
    assert KEY not in await page.content()
    [account] = await services.providers.all(tenant.tenant_id)
    assert account.vendor == "resend" and account.channel is Channel.EMAIL


async def test_remove_a_suppression(
    page: Page, services: Services, tenant: TenantClient, shots: Path
) -> None:
    store = services.suppressions
    await store.add(tenant.tenant_id, Channel.EMAIL, "ada@example.com", "hard_bounce", "resend")
    await store.add(tenant.tenant_id, Channel.EMAIL, "grace@example.com", "complaint", "postmark")
    await store.add(tenant.tenant_id, Channel.SMS, "+14155552671", "opted_out", "twilio")
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await sign_in(page, "owner@acme.example", f"/t/{tenant.tenant_id}/")
    await page.get_by_role("navigation").get_by_role("link", name="Suppressions").click()
    rows = page.locator("tbody tr")
    await expect(rows).to_have_count(3)
    await shoot(page, shots, "suppressions")
    await page.get_by_label("Address starts with").fill("ada")
    await page.get_by_role("button", name="Search").click()
    await expect(rows).to_have_count(1)
    await page.get_by_role("button", name="Remove ada@example.com").click()
    await expect(page.get_by_role("status")).to_contain_text("is sent again")
    await expect(page.get_by_text("No suppression matches")).to_be_visible()
    page_of = await store.page(tenant.tenant_id)
    assert [e.address for e in page_of.entries] == ["+14155552671", "grace@example.com"]
