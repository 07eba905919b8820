"""A recipient's links in a real browser, with JavaScript off as a mail reader's browser
may have it: the preference page shows the tenant's categories with a labelled checkbox
per channel and saves what is ticked; the unsubscribe page's button opts out, its GET
alone does not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.async_api import Browser, Page, expect

from homing.managers.optout_links import LinkClaim, LinkPurpose
from homing.services import Services
from tests.browser.conftest import shoot
from tests.conftest import TenantClient

# Every control a person uses is named by a label, the page has a language, one main
# heading, and the fieldsets have legends (what a screen reader needs of a form).
ACCESSIBLE = """() => {
  const controls = [...document.querySelectorAll('input:not([type=hidden]), button')];
  const named = controls.every(
    c => c.tagName === 'BUTTON' ? c.textContent.trim() : c.labels.length);
  const legends = [...document.querySelectorAll('fieldset')].every(
    f => f.querySelector('legend'));
  return named && legends && document.documentElement.lang === 'en'
    && document.querySelectorAll('h1').length === 1;
}"""


async def setup(services: Services, tenant: TenantClient) -> str:
    """Two categories and a recipient; the recipient's row id."""
    for key, body in {
        "digest": {"name": "Weekly digest", "kind": "marketing", "default": {"email": True}},
        "receipts": {"name": "Receipts", "kind": "transactional"},
    }.items():
        response = await tenant.put(f"/v1/categories/{key}", json=body)
        assert response.status_code == 201, response.text
    response = await tenant.put("/v1/recipients/user-1", json={"email": "ada@example.com"})
    assert response.status_code == 201, response.text
    return (await services.recipients.get(tenant.tenant_id, "user-1")).id


def token(services: Services, purpose: LinkPurpose, claim: LinkClaim) -> str:
    return services.optouts.links.issue(purpose, claim)


async def preferences(tenant: TenantClient) -> Any:
    response = await tenant.get("/v1/recipients/user-1/preferences")
    assert response.status_code == 200, response.text
    return response.json()["categories"]


async def no_script(browser: Browser, site: str) -> Page:
    context = await browser.new_context(base_url=site, java_script_enabled=False)
    return await context.new_page()


async def test_the_preference_page_saves_what_is_ticked(
    browser: Browser, site: str, services: Services, tenant: TenantClient, shots: Path
) -> None:
    recipient_id = await setup(services, tenant)
    claim = LinkClaim(tenant.tenant_id, "email", "", recipient_id)
    page = await no_script(browser, site)
    try:
        await page.goto(f"/p/{token(services, LinkPurpose.PREFERENCES, claim)}")
        await expect(page.get_by_role("heading", name="Your preferences")).to_be_visible()
        assert await page.evaluate(ACCESSIBLE)
        digest = page.get_by_role("group", name="Weekly digest")
        receipts = page.get_by_role("group", name="Receipts")
        await expect(digest.get_by_label("Email")).to_be_checked()
        await expect(digest.get_by_label("SMS")).not_to_be_checked()
        await expect(receipts.get_by_label("Chat")).to_be_checked()
        await shoot(page, shots, "preferences")
        await digest.get_by_label("Email").uncheck()
        await receipts.get_by_label("SMS").uncheck()
        await page.get_by_role("button", name="Save").click()
        await expect(page.get_by_text("Your choices are saved.")).to_be_visible()
        saved = page.get_by_role("group", name="Weekly digest").get_by_label("Email")
        await expect(saved).not_to_be_checked()
    finally:
        await page.context.close()
    chosen = await preferences(tenant)
    assert chosen["digest"] == {"email": False, "sms": False, "chat": False, "in_app": False}
    assert chosen["receipts"] == {"email": True, "sms": False, "chat": True, "in_app": True}


async def test_the_unsubscribe_button_opts_out_and_opening_the_page_does_not(
    browser: Browser, site: str, services: Services, tenant: TenantClient
) -> None:
    recipient_id = await setup(services, tenant)
    claim = LinkClaim(tenant.tenant_id, "email", "digest", recipient_id)
    page = await no_script(browser, site)
    try:
        await page.goto(f"/u/{token(services, LinkPurpose.UNSUBSCRIBE, claim)}")
        await expect(page.get_by_role("heading", name="Unsubscribe")).to_be_visible()
        assert await page.evaluate(ACCESSIBLE)
        assert (await preferences(tenant))["digest"]["email"] is True
        await page.get_by_role("button", name="Unsubscribe").click()
        await expect(page.get_by_role("heading", name="You are unsubscribed")).to_be_visible()
    finally:
        await page.context.close()
    assert (await preferences(tenant))["digest"]["email"] is False


async def test_a_link_that_does_not_open_is_a_plain_404_page(
    browser: Browser, site: str, services: Services, tenant: TenantClient
) -> None:
    recipient_id = await setup(services, tenant)
    claim = LinkClaim(tenant.tenant_id, "email", "digest", recipient_id)
    unsubscribe = token(services, LinkPurpose.UNSUBSCRIBE, claim)
    page = await no_script(browser, site)
    try:
        answer = await page.goto(f"/p/{unsubscribe}")  # an unsubscribe token, not this page's
        assert answer is not None and answer.status == 404
        await expect(page.get_by_role("heading", name="Not found")).to_be_visible()
        assert unsubscribe not in await page.content()
    finally:
        await page.context.close()
