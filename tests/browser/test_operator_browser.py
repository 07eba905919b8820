"""The operator's pages in a real browser: dead letters of two tenants filtered by
reason, counted in a dry run, redriven and seen leave the redrivable set; provider
health with failures injected at the sandbox; a resolved alert and a firing one among
the recent alerts; the pages readable at phone width."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import httpx
from playwright.async_api import Page, expect

from homing.clock import as_datetime
from homing.domain.job_search import JobFilter
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.browser.conftest import shoot
from tests.browser.test_console_browser import sign_in
from tests.conftest import deliver, make_tenant
from tests.console_helpers import add_user
from tests.dead_letter_helpers import dead_letter
from tests.e2e.conftest import register, send
from tests.fixtures import Sandbox

PHONE = {"width": 390, "height": 800}


async def _fits(page: Page) -> None:
    """Nothing but the tables' own scroll areas is wider than the viewport."""
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"] + 1, width


async def test_an_operator_filters_dead_letters_by_reason_dry_runs_and_redrives(
    page: Page, services: Services, api: httpx.AsyncClient, shots: Path
) -> None:
    acme = await make_tenant(services, api, "Acme")
    globex = await make_tenant(services, api, "Globex")
    for tenant, reason, provider, error in (
        (acme, "provider_error", "resend", "resend answered 503"),
        (acme, "throttled", "postmark", "postmark answered 429"),
        (globex, "provider_error", "resend", "resend answered 500"),
        (globex, "invalid_address", "sendgrid", "sendgrid refused the address"),
    ):
        await dead_letter(services, tenant, error=error, error_class=reason, provider=provider)
    await add_operator(services)
    await sign_in(page, "ops@homing.example", "/operator/dead-letters")
    await expect(page.locator("tr.dead-letter")).to_have_count(4)
    await shoot(page, shots, "operator-dead-letters")
    reasons = page.get_by_role("region", name="By reason")
    await reasons.get_by_role("link", name="provider_error").click()
    rows = page.locator("tr.dead-letter")
    await expect(rows).to_have_count(2)
    await expect(page.get_by_label("Reason", exact=True)).to_have_value("provider_error")
    await expect(rows.filter(has_text="Acme")).to_have_count(1)
    await expect(rows.filter(has_text="Globex")).to_have_count(1)
    await page.get_by_role("button", name="Count (dry run)").click()
    await expect(page.get_by_role("status")).to_contain_text("2 dead letters would be redriven")
    await page.get_by_role("button", name="Redrive", exact=True).click()
    await expect(page.get_by_role("status")).to_contain_text("2 redriven")
    # Gone from what a redrive would take: counted 0 not redriven, each row dated.
    await expect(reasons.locator("tbody tr").first).to_contain_text(
        re.compile(r"provider_error\s*2\s*0")
    )
    dated = re.compile(r"UTC$")
    await expect(rows.locator("td:last-child")).to_have_text([dated, dated])
    await page.get_by_role("button", name="Count (dry run)").click()
    await expect(page.get_by_role("status")).to_contain_text("0 dead letters would be redriven")
    await page.get_by_role("link", name="Clear the filter").click()
    await expect(rows).to_have_count(4)
    for name in ("acme", "globex"):
        tenant = acme if name == "acme" else globex
        failed = [j for j in await _statuses(services, tenant.tenant_id) if j == "FAILED"]
        assert len(failed) == 1, name
    await page.set_viewport_size(PHONE)
    await _fits(page)


async def test_provider_health_shows_the_failures_injected_at_the_sandbox(
    page: Page,
    services: Services,
    api: httpx.AsyncClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    shots: Path,
) -> None:
    acme = await make_tenant(services, api, "Acme")
    globex = await make_tenant(services, api, "Globex")
    await register(acme, sandbox, "resend", 1)
    await register(globex, sandbox, "postmark", 1)
    await sb.fault("resend", status=503)
    for tenant in (acme, acme, acme, globex, globex):
        await send(tenant)
    await deliver(services)
    await add_operator(services)
    await sign_in(page, "ops@homing.example", "/operator/alerts")
    await expect(page.get_by_role("heading", name="Alerts", exact=True)).to_be_visible()
    await expect(page.get_by_text("Nothing is firing")).to_be_visible()
    await expect(page.get_by_role("cell", name="100 %")).to_be_visible()
    await shoot(page, shots, "operator-alerts")
    # Keyboard: from the nav's "Dead letters", Tab reaches "Providers" and Enter opens it.
    main_nav = page.get_by_role("navigation", name="Main")
    await main_nav.get_by_role("link", name="Dead letters").focus()
    await page.keyboard.press("Tab")
    await expect(main_nav.get_by_role("link", name="Providers")).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("heading", name="Provider health")).to_be_visible()
    vendors = page.locator("tr.vendor")
    await expect(vendors.filter(has_text="resend")).to_contain_text("100 %")
    await expect(vendors.filter(has_text="postmark")).to_contain_text("0 %")
    await expect(page.locator("tr.account").first).to_contain_text("Acme")
    await shoot(page, shots, "operator-providers")
    await page.get_by_role("link", name="Last 24h").click()
    await expect(vendors.filter(has_text="resend")).to_contain_text("100 %")
    await page.set_viewport_size(PHONE)
    await _fits(page)


async def test_the_alerts_page_shows_a_resolved_alert_with_how_long_it_fired(
    page: Page, services: Services
) -> None:
    signals, now = services.signals, as_datetime(services.clock.now())
    await signals.start("provider_failing:resend", "4 of 4 calls failed", now)
    assert await signals.stop("provider_failing:resend", now + timedelta(minutes=16))
    await signals.start("inbound_lag", "p95 700s", now + timedelta(minutes=20))
    await add_operator(services)
    await sign_in(page, "ops@homing.example", "/operator/alerts")
    rows = page.get_by_role("region", name="Recent alerts").locator("tbody tr")
    await expect(rows).to_have_count(2)
    await expect(rows.first).to_contain_text("inbound_lag")
    await expect(rows.first).to_contain_text("still firing")
    await expect(rows.nth(1)).to_contain_text("provider_failing:resend")
    await expect(rows.nth(1)).to_contain_text("16 min")
    await page.set_viewport_size(PHONE)
    await _fits(page)


async def test_at_phone_width_a_tenants_plan_changes_without_a_sideways_scroll(
    page: Page, services: Services, api: httpx.AsyncClient, shots: Path
) -> None:
    """At 390 px each tenant is a card: its plan selector and button sit inside the
    viewport (the table's region does not scroll), each value labelled by its column."""
    acme = await make_tenant(services, api, "Acme")
    await make_tenant(services, api, "Globex")
    await add_operator(services)
    await sign_in(page, "ops@homing.example", "/operator/tenants")
    await page.set_viewport_size(PHONE)
    await _fits(page)
    region = page.get_by_role("region", name="Tenants: table")
    widths = await region.evaluate("r => [r.scrollWidth, r.clientWidth]")
    assert widths[0] <= widths[1], widths
    row = page.locator(f"#t-{acme.tenant_id}")
    plan = row.get_by_label("Plan of Acme", exact=True)
    change = row.get_by_role("button", name="Change the plan of Acme")
    for control in (plan, change):
        box = await control.bounding_box()
        assert box is not None and box["x"] >= 0, box
        assert box["x"] + box["width"] <= PHONE["width"], box
    label = await row.locator("td[data-label=Plan]").evaluate(
        "td => getComputedStyle(td, '::before').content"
    )
    assert label == '"Plan"', label
    await shoot(page, shots, "operator-tenants-phone")
    await plan.select_option("INDIE")
    await change.click()
    await expect(page.get_by_role("status")).to_contain_text("INDIE")
    await expect(
        page.locator(f"#t-{acme.tenant_id}").get_by_label("Plan of Acme", exact=True)
    ).to_have_value("INDIE")


async def add_operator(services: Services) -> None:
    await add_user(services, "ops@homing.example", operator=True)


async def _statuses(services: Services, tenant_id: str) -> list[str]:
    page = await services.jobs.page(JobFilter(tenant_id=tenant_id), limit=50)
    return [j.status.value for j in page.jobs]
