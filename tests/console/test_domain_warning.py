"""The domains page warns before and after the first sending domain: from then on Homing
refuses every email whose ``from`` is not on a verified domain, so adding one unverified
stops the tenant's sends until it is verified."""

from __future__ import annotations

from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.conftest import register

DOMAIN = "mail.acme.example"


async def test_the_first_domain_is_warned_about_before_and_after(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    page = f"/t/{tenant.tenant_id}/domains"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        before = await client.get(page)
        form = {"csrf": csrf, "domain": DOMAIN, "provider_account_id": resend["id"]}
        added = await client.post(page, data=form, follow_redirects=True)
        second = await client.post(page, data=form | {"domain": "news.acme.example"})
        again = await client.get(page)
    assert 'data-warning="first-domain"' in before.text
    assert "domain_not_verified" in before.text
    assert added.status_code == 200, added.text
    assert "Until a domain is verified, every email this tenant sends is refused." in added.text
    assert 'data-warning="none-verified"' in added.text
    assert 'data-warning="first-domain"' not in added.text
    # The second domain's flash does not repeat it; the page still says none is verified.
    assert second.status_code == 303
    assert "Until a domain is verified" not in again.text
    assert 'data-warning="none-verified"' in again.text
