"""Invitations in a real browser: an owner invites from the Users page, the invitee
(who has an account: a link shown to the owner makes none, tests/adversary/test_links)
opens the link in a browser of their own, signs in with their password, lands signed in
as a viewer of the tenant, and the audit log shows both the invitation and its
acceptance."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, Page, expect

from homing.models import Role
from homing.services import Services
from tests.browser.conftest import shoot
from tests.browser.test_console_browser import sign_in
from tests.conftest import TenantClient
from tests.console_helpers import PASSWORD, add_user


async def test_an_owner_invites_and_the_invitee_joins_as_a_viewer(
    page: Page, browser: Browser, site: str, services: Services, tenant: TenantClient, shots: Path
) -> None:
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await add_user(services, "grace@example.com")
    await sign_in(page, "owner@acme.example")
    await page.get_by_role("navigation").get_by_role("link", name="Users").click()
    await expect(page.get_by_role("heading", name="Users", exact=True)).to_be_visible()
    await expect(page.get_by_text("No invitation is waiting.")).to_be_visible()
    await page.get_by_label("Email").fill("grace@example.com")
    await page.get_by_label("Role").select_option("viewer")
    await page.get_by_role("button", name="Invite").click()
    link = (await page.locator("#flash-secret-1").inner_text()).strip()
    assert link.startswith(site + "/invitations/")
    await expect(page.locator("tr.invitation")).to_contain_text("grace@example.com")
    await shoot(page, shots, "users")

    context = await browser.new_context(base_url=site, viewport={"width": 1100, "height": 720})
    try:
        invitee = await context.new_page()
        await invitee.goto(link)
        await expect(invitee.get_by_role("heading", name="Join acme")).to_be_visible()
        await expect(invitee.get_by_text("as viewer", exact=False)).to_be_visible()
        await shoot(invitee, shots, "invitation")
        await invitee.get_by_label("Password", exact=True).fill(PASSWORD)
        await invitee.get_by_role("button", name="Sign in and accept").click()
        await expect(invitee.get_by_role("button", name="Sign out")).to_be_visible()
        await expect(invitee.locator(".who .tenant")).to_contain_text("(viewer)")
        assert invitee.url == f"{site}/t/{tenant.tenant_id}/"
        await expect(invitee.get_by_role("link", name="Users")).to_have_count(0)
    finally:
        await context.close()

    await page.goto(f"/t/{tenant.tenant_id}/users")
    grace = page.locator("tr.member", has_text="grace@example.com")
    await expect(grace).to_contain_text("viewer")
    await expect(page.locator("tr.invitation")).to_have_count(0)
    await page.get_by_role("navigation").get_by_role("link", name="Audit log").click()
    events = page.locator("tr.audit-event")
    await expect(events.first).to_contain_text("invitation.accepted")
    await expect(events.first).to_contain_text("grace@example.com")
    await expect(events.nth(1)).to_contain_text("user.invited")
    await expect(events.nth(1)).to_contain_text("owner@acme.example")
