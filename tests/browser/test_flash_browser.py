"""Post/Redirect/Get in a real browser: a new API key is shown once on the page the
form redirects to, and a reload (a GET, never the form again) shows only its prefix
and the note saying why."""

from __future__ import annotations

from playwright.async_api import Page, expect

from homing.models import Role
from homing.services import Services
from tests.browser.test_console_browser import sign_in
from tests.conftest import TenantClient
from tests.console_helpers import add_user


async def test_a_new_key_is_gone_after_a_reload_with_the_note_and_only_one_was_issued(
    page: Page, services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    where = f"/t/{tenant.tenant_id}/api-keys"
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await sign_in(page, "owner@acme.example", where)
    await page.get_by_label("Name").fill("production")
    await page.get_by_role("button", name="Create key").click()
    said = page.get_by_role("status")
    await expect(said).to_contain_text("API key “production” created")
    issued = said.locator(".secret")
    await expect(issued).to_contain_text("hk_")
    key = (await issued.inner_text()).strip()
    assert page.url.endswith(where) and key not in page.url
    copy = said.locator("button[data-copy]")
    await expect(copy).to_have_text("Copy")
    await copy.click()
    await expect(copy).to_have_text("Copied")
    assert await page.evaluate("navigator.clipboard.readText()") == key
    await page.reload()
    await expect(page.get_by_role("heading", name="API keys")).to_be_visible()
    await expect(page.get_by_role("status")).to_have_count(0)
    await expect(
        page.get_by_text("A new key is shown once, right after it is created")
    ).to_be_visible()
    assert key not in await page.content()
    keys = await services.keys.live(tenant.tenant_id)
    assert sorted(k.name for k in keys) == ["default", "production"]
    [made] = [k for k in keys if k.name == "production"]
    assert key.startswith(made.prefix)
    await expect(page.locator("tbody")).to_contain_text(made.prefix)
