"""The console in a real browser: sign in, find a sent message with its attempts,
redrive a dead letter, a viewer refused a change, an operator suspending a tenant, a
form without its CSRF token refused, an expired session sent back to sign in, and a
change shown on the audit log."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.async_api import Page, expect

from homing.clock import ManualClock
from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.browser.conftest import shoot
from tests.conftest import TenantClient, deliver, make_tenant
from tests.console_helpers import PASSWORD, add_user
from tests.dead_letter_helpers import dead_letter
from tests.e2e.conftest import register, send


async def sign_in(page: Page, email: str, then: str = "/") -> None:
    await page.goto(then)
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("button", name="Sign out", exact=True)).to_be_visible()


async def test_sign_in_and_find_a_sent_message_with_its_attempts(
    page: Page, services: Services, api: httpx.AsyncClient, sandbox: SandboxServer, shots: Path
) -> None:
    acme = await make_tenant(services, api, "Acme")
    await register(acme, sandbox, "resend", 1)
    for n, to in enumerate(["grace@example.com", "alan@example.com", "ada@example.com"]):
        await send(acme, to=to, subject=f"Receipt no. {1041 + n}")
    assert await deliver(services) == 3
    await add_user(services, "owner@acme.example", acme.tenant_id, Role.OWNER)
    await page.goto("/sign-in")
    await shoot(page, shots, "sign-in")
    await sign_in(page, "owner@acme.example")
    await expect(page.get_by_role("heading", name="Acme")).to_be_visible()
    await expect(page.locator("svg.chart rect.ok").last).to_be_visible()
    await shoot(page, shots, "overview")
    await page.get_by_role("navigation").get_by_role("link", name="Messages").click()
    await page.get_by_label("Recipient").fill("grace@example.com")
    await page.get_by_role("button", name="Search").click()
    rows = page.locator("tbody tr")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("Receipt no. 1041")
    await shoot(page, shots, "messages")
    await rows.first.get_by_role("link").click()
    timeline = page.locator("ol.timeline").first
    await expect(timeline).to_contain_text("resend")
    await expect(timeline).to_contain_text("success")
    await expect(timeline).to_contain_text("HTTP 200")
    await shoot(page, shots, "message")


async def test_redrive_a_dead_letter_after_a_dry_run(
    page: Page, services: Services, tenant: TenantClient, shots: Path
) -> None:
    letter_id = await dead_letter(services, tenant, error="resend answered 503", provider="resend")
    letter = await services.dead_letter_store.get(tenant.tenant_id, letter_id)
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await sign_in(page, "owner@acme.example", f"/t/{tenant.tenant_id}/dead-letters")
    await expect(page.locator("tbody")).to_contain_text("resend answered 503")
    await page.get_by_role("button", name="Count (dry run)").click()
    await expect(page.get_by_role("status")).to_contain_text("1 dead letter would be redriven")
    await shoot(page, shots, "dead-letters")
    await page.get_by_role("button", name="Redrive", exact=True).click()
    await expect(page.get_by_role("status")).to_contain_text("1 redriven")
    job, _ = await services.jobs.get(tenant.tenant_id, letter.job_id)
    assert job.status.value == "PENDING"


async def test_a_viewer_is_refused_a_change(
    page: Page, services: Services, tenant: TenantClient
) -> None:
    letter_id = await dead_letter(services, tenant)
    letter = await services.dead_letter_store.get(tenant.tenant_id, letter_id)
    await add_user(services, "viewer@acme.example", tenant.tenant_id, Role.VIEWER)
    await sign_in(page, "viewer@acme.example", f"/t/{tenant.tenant_id}/messages/{letter.job_id}")
    await expect(page.get_by_text("An owner of this tenant can retry it.")).to_be_visible()
    await expect(page.get_by_role("button", name="Retry this message")).to_have_count(0)
    csrf = await page.locator('input[name="csrf"]').first.input_value()
    refused = await page.request.post(
        f"/t/{tenant.tenant_id}/messages/{letter.job_id}/retry", form={"csrf": csrf}
    )
    assert refused.status == 403
    assert "Viewers can look" in await refused.text()
    job, _ = await services.jobs.get(tenant.tenant_id, letter.job_id)
    assert job.status.value == "FAILED"


async def test_an_operator_suspends_a_tenant(
    page: Page, services: Services, api: httpx.AsyncClient, shots: Path
) -> None:
    acme = await make_tenant(services, api, "Acme")
    await make_tenant(services, api, "Globex")
    await add_user(services, "ops@homing.example", operator=True)
    await sign_in(page, "ops@homing.example")
    await expect(page.get_by_role("heading", name="Tenants")).to_be_visible()
    await shoot(page, shots, "operator-tenants")
    await page.get_by_role("button", name="Suspend Acme").click()
    await expect(page.get_by_role("button", name="Resume Acme")).to_be_visible()
    assert (await acme.get("/v1/usage")).status_code == 403
    await page.get_by_role("navigation").get_by_role("link", name="Queues").click()
    await expect(page.get_by_role("heading", name="Queues")).to_be_visible()


async def test_a_form_without_its_csrf_token_is_refused(
    page: Page, services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await sign_in(page, "owner@acme.example", f"/t/{tenant.tenant_id}/api-keys")
    await page.locator('form[action$="/api-keys"] input[name="csrf"]').evaluate(
        "input => { input.value = 'forged' }"
    )
    await page.get_by_label("Name").fill("sneaky")
    await page.get_by_role("button", name="Create key").click()
    await expect(page.get_by_role("alert")).to_contain_text("This form has expired")
    assert [k.name for k in await services.keys.live(tenant.tenant_id)] == ["default"]
    await page.goto(f"/t/{tenant.tenant_id}/api-keys")
    await page.get_by_label("Name").fill("production")
    await page.get_by_role("button", name="Create key").click()
    await expect(page.get_by_role("status").locator(".secret")).to_contain_text("hk_")


async def test_an_expired_session_goes_back_to_sign_in(
    page: Page, services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await sign_in(page, "owner@acme.example", f"/t/{tenant.tenant_id}/messages")
    clock.advance(31 * 60)
    await page.reload()
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert page.url.endswith(f"/sign-in?next=/t/{tenant.tenant_id}/messages")


async def test_reorder_providers_and_the_next_send_takes_the_new_first(
    page: Page, services: Services, tenant: TenantClient, sandbox: SandboxServer, shots: Path
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await register(tenant, sandbox, "postmark", 2)
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await sign_in(page, "owner@acme.example", f"/t/{tenant.tenant_id}/providers")
    rows = page.locator("tbody tr")
    await expect(rows.first).to_contain_text("resend")
    await shoot(page, shots, "providers")
    await page.get_by_role("button", name="Move up postmark").click()
    await expect(rows.first).to_contain_text("postmark")
    job_id = await send(tenant)
    assert await deliver(services) == 1
    job, _ = await services.jobs.get(tenant.tenant_id, job_id)
    assert job.provider == "postmark"


async def test_add_a_domain_and_copy_its_records(
    page: Page, services: Services, tenant: TenantClient, sandbox: SandboxServer, shots: Path
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await sign_in(page, "owner@acme.example", f"/t/{tenant.tenant_id}/domains")
    await page.get_by_label("Domain").fill("mail.acme.example")
    await page.get_by_role("button", name="Add domain").click()
    await expect(page.get_by_role("heading", name="mail.acme.example")).to_be_visible()
    await shoot(page, shots, "domains")
    value = page.locator('code[id^="v-"]').first
    copy = page.get_by_role("button", name="Copy value of record 1")
    await expect(copy).to_be_visible()  # the script shows the buttons it serves
    await copy.click()
    await expect(copy).to_have_text("Copied")
    copied = await page.evaluate("navigator.clipboard.readText()")
    assert copied == (await value.inner_text()).strip()
    await page.get_by_role("button", name="Verify mail.acme.example now").click()
    await expect(page.get_by_role("heading", name="mail.acme.example")).to_be_visible()


async def test_rotate_the_signing_secret_with_the_overlap_shown(
    page: Page, services: Services, tenant: TenantClient, shots: Path
) -> None:
    assert (await tenant.post("/v1/webhook-secret")).status_code == 201
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await sign_in(page, "owner@acme.example", f"/t/{tenant.tenant_id}/webhooks")
    await page.get_by_role("button", name="Rotate secret").click()
    issued = page.get_by_role("status").locator(".secret")
    await expect(issued).to_contain_text("whsec_")
    secret = (await issued.inner_text()).strip()
    await expect(page.get_by_role("status")).to_contain_text("signs beside it until")
    await shoot(page, shots, "webhooks")
    await page.goto(f"/t/{tenant.tenant_id}/webhooks")
    await expect(page.locator(".secret")).to_have_count(0)
    await expect(page.get_by_text("still signs until")).to_be_visible()
    # The audit log shows the change: by whom, newest first, the secret only "changed".
    await page.get_by_role("navigation").get_by_role("link", name="Audit log").click()
    await expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    rows = page.locator("tr.audit-event")
    await expect(rows).to_have_count(3)
    await expect(rows.first).to_contain_text("webhook_secret.rotated")
    await expect(rows.first).to_contain_text("owner@acme.example")
    await expect(rows.first.locator("dl.changes dt")).to_have_text("secret")
    await expect(rows.first.locator("dl.changes dd")).to_have_text("changed")
    await expect(rows.nth(1)).to_contain_text("user.added")  # the owner, by homing user add
    await expect(rows.nth(2)).to_contain_text("webhook_secret.created")
    await shoot(page, shots, "audit")
    assert secret.startswith("whsec_") and secret not in await page.content()
    await page.get_by_label("Action").select_option("webhook_secret.created")
    await page.get_by_role("button", name="Filter").click()
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("api_key")
