"""The audit log in a real browser: changes made through the console (a key issued,
the signing secret generated and rotated, a provider moved, a domain added) each
listed with the user as the actor, and an operator's suspension on the operator's
audit log. Each change also says what it did on the page it redirects to."""

from __future__ import annotations

from playwright.async_api import Page, expect

from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.browser.test_console_browser import sign_in
from tests.conftest import TenantClient
from tests.console_helpers import add_user
from tests.e2e.conftest import register

OWNER = "owner@acme.example"


async def _change(page: Page, button: str, said: str) -> None:
    await page.get_by_role("button", name=button, exact=True).click()
    await expect(page.get_by_role("status")).to_contain_text(said)


async def test_the_audit_log_shows_each_console_change_with_the_user_as_actor(
    page: Page, services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    await register(tenant, sandbox, "postmark", 2)
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    nav = page.get_by_role("navigation")
    await sign_in(page, OWNER, f"/t/{tenant.tenant_id}/api-keys")
    await page.get_by_label("Name").fill("deploy")
    await _change(page, "Create key", "API key “deploy” created")
    await nav.get_by_role("link", name="Webhooks").click()
    await _change(page, "Generate secret", "Signing secret generated")
    await _change(page, "Rotate secret", "Signing secret rotated")
    await nav.get_by_role("link", name="Providers").click()
    await _change(page, "Move up postmark", "postmark moved up")
    await nav.get_by_role("link", name="Domains").click()
    await page.get_by_label("Domain").fill("mail.acme.example")
    await page.get_by_label("Provider").select_option(resend["id"])
    await _change(page, "Add domain", "Domain mail.acme.example added")
    await nav.get_by_role("link", name="Audit log").click()
    await expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    rows = page.locator("tr.audit-event")
    by_user = rows.filter(has_text=f"{OWNER} (user)")
    await expect(by_user).to_have_count(6)
    for action in (
        "api_key.issued",
        "webhook_secret.created",
        "webhook_secret.rotated",
        "provider.reordered",
        "domain.added",
    ):
        await expect(by_user.filter(has_text=action).first).to_be_visible()
    await expect(by_user.filter(has_text="provider.reordered")).to_have_count(2)
    rotated = by_user.filter(has_text="webhook_secret.rotated").locator("dl.changes")
    await expect(rotated.locator("dt")).to_have_text("secret")
    await expect(rotated.locator("dd")).to_have_text("changed")


async def test_the_operators_audit_log_shows_a_suspension_by_the_operator(
    page: Page, services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ops@homing.example", operator=True)
    await sign_in(page, "ops@homing.example", "/operator/tenants")
    await _change(page, "Suspend acme", "Tenant acme suspended")
    await expect(page.get_by_role("button", name="Resume acme")).to_be_visible()
    await page.get_by_role("navigation").get_by_role("link", name="Audit log").click()
    suspended = page.locator("tr.audit-event").filter(has_text="tenant.suspended")
    await expect(suspended).to_have_count(1)
    await expect(suspended).to_contain_text("ops@homing.example (user)")
    await expect(suspended).to_contain_text(tenant.tenant_id)
    await expect(suspended.locator("dl.changes dt")).to_have_text("suspended")
    await expect(suspended.locator("dl.changes dd")).to_have_text("true")
