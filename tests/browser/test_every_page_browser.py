"""Every console page, tenant's, operator's and public, in a real browser at 1280 and at
390 px wide and at 1280 in the dark scheme, all of one seeded Homing: it answers,
nothing is wider than a phone's screen (tables scroll inside their own box), axe-core
finds no serious or critical accessibility violation, and no secret of the fixture (an
API key, a provider's credentials) is on it. The screenshots of docs/console.md are
these pages (``HOMING_TEST_SCREENSHOTS=1``, see conftest)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
from playwright.async_api import Browser, BrowserContext, Cookie, Page, ViewportSize, expect

from homing.channels import Channel
from homing.managers.audit import CLI_ACTOR
from homing.managers.optout_links import LinkClaim, LinkPurpose
from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.browser.axe import violations
from tests.browser.conftest import shoot
from tests.browser.test_console_browser import sign_in
from tests.browser.test_recipient_links_browser import setup as recipient_setup
from tests.conftest import TenantClient, deliver, make_tenant
from tests.console_helpers import PASSWORD, add_user
from tests.dead_letter_helpers import dead_letter
from tests.e2e.conftest import register, send
from tests.e2e.test_notifications import PARTS
from tests.e2e.test_recipients import put_recipient
from tests.e2e.test_templates import make_template, publish

WIDE = ViewportSize(width=1280, height=800)
PHONE = ViewportSize(width=390, height=844)
USER = "ada@acme.example"
INBOUND_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
# The page's width, the window's, and what reaches past the window (to say why).
_WIDTHS = """() => {
  const inner = window.innerWidth;
  const past = [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > inner + 1)
    .slice(0, 4).map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''));
  return [document.scrollingElement.scrollWidth, inner, past];
}"""


@dataclass(frozen=True, slots=True)
class Tour:
    """The pages to visit (name -> address; the names of the screenshots) and the
    secrets no page may show."""

    public: dict[str, str]
    signed_in: dict[str, str]
    secrets: tuple[str, ...]


async def _layout(acme: TenantClient) -> int:
    """The layout ``default``, one version published and a draft after it (its number)."""
    assert (
        await acme.post("/v1/layouts", json={"key": "default", "name": "Acme frame"})
    ).is_success
    html = '<div class="frame"><p>Acme</p>{{ content }}<p>Acme, 1 Main Street</p></div>'
    first = await acme.post("/v1/layouts/default/versions", json={"html": html})
    published = await acme.post(f"/v1/layouts/default/versions/{first.json()['id']}/publish")
    assert published.status_code == 200, published.text
    draft = await acme.post("/v1/layouts/default/versions", json={"html": html})
    assert draft.status_code == 201, draft.text
    number: int = draft.json()["number"]
    return number


async def _join(services: Services, tenant_id: str, name: str, site: str) -> None:
    """Ada joins another tenant as a viewer, by its invitation."""
    invitations = services.invitations
    invited = await invitations.invite(tenant_id, name, USER, Role.VIEWER, CLI_ACTOR, site)
    invitation, _ = await invitations.opened(invited.link.rsplit("/", 1)[1], "127.0.0.1")
    await invitations.accept_signed_in(invitation, PASSWORD, "127.0.0.1")


async def _notification(services: Services, acme: TenantClient) -> dict[str, Any]:
    """A notification to every channel of a recipient with no phone: in-app stored,
    SMS skipped (unreachable), email queued."""
    await make_template(acme, "report")
    await publish(acme, "report", **PARTS)
    await put_recipient(acme, "user-42", email="grace@example.com")
    body = {
        "recipient": "user-42",
        "template": "report",
        "data": {"n": 7},
        "channels": ["in_app", "sms", "email"],
        "strategy": "all",
        "from": "Acme <hello@acme.example>",
    }
    response = await acme.post("/v1/notifications", json=body)
    assert response.status_code == 202, response.text
    notified: dict[str, Any] = response.json()
    return notified


async def _seed(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer, site: str
) -> Tour:
    """Acme with a bit of everything, Globex beside it, and Ada: Acme's owner, Globex's
    viewer and the operator."""
    acme = await make_tenant(services, api, "Acme")
    globex = await make_tenant(services, api, "Globex")
    resend = await register(acme, sandbox, "resend", 1)
    await register(acme, sandbox, "postmark", 2)
    sent = [
        await send(acme, to=to, subject=f"Receipt no. {1041 + n}")
        for n, to in enumerate(["grace@example.com", "alan@example.com", "ada@example.com"])
    ]
    notified = await _notification(services, acme)
    assert await deliver(services) == 4
    assert await services.notifications.sweep() == 1
    letter_id = await dead_letter(services, acme, error="resend answered 503", provider="resend")
    letter = await services.dead_letter_store.get(acme.tenant_id, letter_id)
    suppressions = services.suppressions
    await suppressions.add(
        acme.tenant_id, Channel.EMAIL, "bounce@example.com", "hard_bounce", "resend"
    )
    await suppressions.add(acme.tenant_id, Channel.SMS, "+14155552671", "opted_out", "twilio")
    added = await acme.post(
        "/v1/domains", json={"domain": "mail.acme.example", "provider_account_id": resend["id"]}
    )
    assert added.status_code == 201, added.text
    assert (await acme.post("/v1/webhook-secret")).status_code == 201
    hook = {"url": "https://hooks.acme.example/homing", "payload": {"order": 42}}
    hooked = await acme.post("/v1/notifications/webhook", json=hook)
    assert hooked.status_code == 202, hooked.text
    gone_url = services.webhooks.normalise_url("https://old-hooks.acme.example/homing")
    await services.webhooks.store.mark_gone(acme.tenant_id, gone_url, hooked.json()["id"])
    inbound = {"signing_secret": INBOUND_SECRET}
    put = await acme.api.put(
        f"/v1/providers/{resend['id']}/inbound", json=inbound, headers=acme.headers
    )
    assert put.status_code == 200, put.text
    await add_user(services, USER, acme.tenant_id, Role.OWNER, operator=True)
    await _join(services, globex.tenant_id, "Globex", site)
    invited = await services.invitations.invite(
        acme.tenant_id, "Acme", "grace@example.com", Role.VIEWER, CLI_ACTOR, site
    )
    welcome = {"key": "welcome", "name": "Welcome"}
    assert (await acme.post("/v1/templates", json=welcome)).status_code == 201
    version = {"email": {"subject": "Hi {{ name }}", "html": "<p>Hello {{ name }}</p>"}}
    drafted = await acme.post("/v1/templates/welcome/versions", json=version)
    assert drafted.status_code == 201, drafted.text
    layout_draft = await _layout(acme)
    recipient = await recipient_setup(services, acme)
    links = services.optouts.links
    unsubscribe = links.issue(
        LinkPurpose.UNSUBSCRIBE, LinkClaim(acme.tenant_id, "email", "digest", recipient)
    )
    preferences = links.issue(
        LinkPurpose.PREFERENCES, LinkClaim(acme.tenant_id, "email", "", recipient)
    )
    t = f"/t/{acme.tenant_id}"
    return Tour(
        public={
            "sign-in": "/sign-in",
            "invitation": invited.link.removeprefix(site),
            "unsubscribe": f"/u/{unsubscribe}",
            "preferences": f"/p/{preferences}",
        },
        signed_in={
            "tenants": "/",
            "overview": f"{t}/",
            "messages": f"{t}/messages",
            "message": f"{t}/messages/{sent[0]}",
            "message-failed": f"{t}/messages/{letter.job_id}",
            "message-step": f"{t}/messages/{notified['steps'][2]['job_id']}",
            "notifications": f"{t}/notifications",
            "notification": f"{t}/notifications/{notified['id']}",
            "send-test": f"{t}/send-test",
            "send-test-sms": f"{t}/send-test?channel=sms",
            "dead-letters": f"{t}/dead-letters",
            "dead-letters-purge": f"{t}/dead-letters/purge",
            "suppressions": f"{t}/suppressions",
            "providers": f"{t}/providers",
            "provider-new": f"{t}/providers/new",
            "provider-remove": f"{t}/providers/{resend['id']}/remove",
            "pacing": f"{t}/providers/{resend['id']}/pacing",
            "inbound-secret": f"{t}/providers/{resend['id']}/inbound",
            "inbound-secret-remove": f"{t}/providers/{resend['id']}/inbound/remove",
            "domains": f"{t}/domains",
            "domain-remove": f"{t}/domains/{added.json()['id']}/remove",
            "templates": f"{t}/templates",
            "template": f"{t}/templates/welcome",
            "template-draft": f"{t}/templates/welcome/versions/{drafted.json()['number']}",
            "layouts": f"{t}/layouts",
            "layout": f"{t}/layouts/default",
            "layout-draft": f"{t}/layouts/default/versions/{layout_draft}",
            "webhooks": f"{t}/webhooks",
            "api-keys": f"{t}/api-keys",
            "users": f"{t}/users",
            "audit": f"{t}/audit",
            "operator-tenants": "/operator/tenants",
            "operator-queues": "/operator/queues",
            "operator-dead-letters": "/operator/dead-letters",
            "operator-providers": "/operator/providers",
            "operator-alerts": "/operator/alerts",
            "operator-audit": "/operator/audit",
            "not-found": f"{t}/no-such-page",
        },
        secrets=(acme.key, globex.key, f"resend-key-{acme.tenant_id[-6:]}", INBOUND_SECRET),
    )


async def _check(page: Page, name: str, address: str, tour: Tour, width: str) -> list[str]:
    """What is wrong with one page at one width (empty: nothing)."""
    response = await page.goto(address)
    assert response is not None
    problems: list[str] = []
    expected = 404 if name == "not-found" else 200
    if response.status != expected:
        problems.append(f"{name}: HTTP {response.status}")
    await expect(page.locator("h1")).to_have_count(1)
    scroll, inner, wide = await page.evaluate(_WIDTHS)
    if scroll > inner:
        problems.append(f"{name} at {width}: the page is {scroll} px wide: {wide}")
    for v in await violations(page):
        problems.append(f"{name} at {width}: {v['impact']} {v['id']} ({v['help']}): {v['nodes']}")
    html = await page.content()
    problems += [f"{name}: a secret is on the page" for s in tour.secrets if s in html]
    return problems


async def _visit(
    context: BrowserContext, pages: dict[str, str], tour: Tour, where: Path, look: Look
) -> list[str]:
    page = context.pages[0] if context.pages else await context.new_page()
    problems: list[str] = []
    # What the served Content-Security-Policy refused (an inline style, a script from
    # elsewhere): the page must need nothing the policy forbids.
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Security Policy" in m.text else None)
    for name, address in pages.items():
        problems += await _check(page, name, address, tour, look.name)
        problems += [f"{name}: the CSP refused: {text[:200]}" for text in refused]
        refused.clear()
        if look.shots is None or name in look.shots:
            await shoot(page, where, name + look.suffix)
    return problems


@dataclass(frozen=True, slots=True)
class Look:
    """One way to see the pages: a window size and colour scheme, the screenshots'
    suffix and which pages it shoots (None: every one)."""

    name: str
    viewport: ViewportSize
    scheme: Literal["light", "dark"] = "light"
    suffix: str = ""
    shots: frozenset[str] | None = None


LOOKS = [
    Look("1280 px", WIDE),
    Look("390 px", PHONE, suffix="-phone"),
    Look("1280 px dark", WIDE, "dark", "-dark", frozenset({"overview", "messages", "message"})),
]


async def _menu(page: Page, where: Path) -> None:
    """At phone width the page comes first: the navigation opens with "Menu"."""
    nav = page.get_by_role("navigation", name="Main")
    menu = page.get_by_role("button", name="Menu")
    await expect(nav).to_be_hidden()
    await expect(menu).to_have_attribute("aria-expanded", "false")
    await menu.click()
    await expect(menu).to_have_attribute("aria-expanded", "true")
    await expect(nav.get_by_role("link", name="Messages")).to_be_visible()
    await shoot(page, where, "menu-phone")
    await menu.click()
    await expect(nav).to_be_hidden()


async def test_every_page_fits_and_passes_axe(
    browser: Browser,
    site: str,
    services: Services,
    api: httpx.AsyncClient,
    sandbox: SandboxServer,
    gallery: Path,
) -> None:
    """Every look (``LOOKS``) of one seeded Homing: Ada signs in once, with the form,
    and each later look's context gets her session's cookie after its public pages."""
    tour = await _seed(services, api, sandbox, site)
    problems: list[str] = []
    signed_in: list[Cookie] = []
    for look in LOOKS:
        problems += await _tour(browser, site, tour, gallery, look, signed_in)
    assert not problems, "\n".join(problems)


async def _tour(
    browser: Browser, site: str, tour: Tour, where: Path, look: Look, signed_in: list[Cookie]
) -> list[str]:
    """The problems of every page in one look; signs Ada in when ``signed_in`` is empty
    (and keeps her cookies there), else hands the context those cookies."""
    context = await browser.new_context(
        base_url=site, viewport=look.viewport, color_scheme=look.scheme
    )
    try:
        problems = await _visit(context, tour.public, tour, where, look)
        page = context.pages[0]
        if signed_in:
            await context.add_cookies(
                [
                    {
                        "name": c["name"],
                        "value": c["value"],
                        "url": site,
                        "httpOnly": c["httpOnly"],
                        "sameSite": c["sameSite"],
                    }
                    for c in signed_in
                ]
            )
        else:
            await page.set_viewport_size(WIDE)  # where "Sign out" is in sight
            await sign_in(page, USER, "/")
            await page.set_viewport_size(look.viewport)
            signed_in += await context.cookies()
        problems += await _visit(context, tour.signed_in, tour, where, look)
        if look.viewport == PHONE:
            await _menu(page, where)
    finally:
        await context.close()
    return problems
