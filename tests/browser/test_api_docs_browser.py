"""The API reference pages work offline (issue #29): /docs (Swagger UI) and /redoc
(ReDoc) render the operations in a real browser that resolves no name but loopback;
every request they make goes to Homing itself, and the one ReDoc would make elsewhere
(its "by Redocly" logo) is refused by the page's CSP before it leaves the browser."""

from __future__ import annotations

from dataclasses import dataclass, field

from playwright.async_api import Page, Request, expect


@dataclass
class Requests:
    site: str
    elsewhere: list[str] = field(default_factory=list)
    failed: dict[str, str | None] = field(default_factory=dict)

    def check(self) -> None:
        unblocked = [url for url in self.elsewhere if self.failed.get(url) != "csp"]
        assert unblocked == [], "requests beyond Homing that the CSP did not refuse"
        ours = {url: why for url, why in self.failed.items() if url not in self.elsewhere}
        assert ours == {}, "Homing's own assets all load"


def _recording(page: Page, site: str) -> Requests:
    seen = Requests(site)

    def requested(request: Request) -> None:
        if not request.url.startswith((site, f"blob:{site}", "data:")):
            seen.elsewhere.append(request.url)

    page.on("request", requested)
    page.on("requestfailed", lambda request: seen.failed.update({request.url: request.failure}))
    return seen


async def test_swagger_ui_renders_every_route_from_homings_own_assets(
    page: Page, site: str
) -> None:
    seen = _recording(page, site)
    await page.goto("/docs")
    email = page.locator("#operations-notifications-send_email_v1_notifications_email_post")
    await expect(email).to_be_visible(timeout=20_000)
    assert await page.locator(".opblock").count() > 40, "every public route is listed"
    await email.locator(".opblock-summary").click()
    await expect(page.get_by_text("Idempotency-Key").first).to_be_visible()
    seen.check()
    assert seen.elsewhere == []


async def test_redoc_renders_from_homings_own_assets(page: Page, site: str) -> None:
    seen = _recording(page, site)
    await page.goto("/redoc")
    await expect(page.get_by_role("heading", level=1)).to_contain_text("Homing", timeout=20_000)
    await expect(page.get_by_text("/v1/notifications/email").first).to_be_attached()
    seen.check()
