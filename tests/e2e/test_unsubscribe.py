"""One-click unsubscribe end to end, on SQLite and PostgreSQL, through the sandbox over
real HTTP and SMTP: a marketing email carries RFC 2369's and RFC 8058's fields at the
vendors and over SMTP, its link works, a POST of it opts out (the next send ends
SUPPRESSED with ``preference``), a GET does not, a replay changes nothing, a
transactional email carries no field; without HOMING_PUBLIC_URL
(tests/e2e/test_unsubscribe_without_url.py) a marketing email is 422.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.e2e.conftest import SLACK_PATH, Sandbox, deliver, job, register
from tests.e2e.test_header_fields import fields, smtp_credentials
from tests.e2e.test_recipients import FROM, email_by_recipient, put_category, put_recipient
from tests.e2e.test_templates import make_template, publish
from tests.fixtures import settings_for

PUBLIC = "http://homing.test"
ONE_CLICK = {"List-Unsubscribe": "One-Click"}
LINK = re.compile(r"<(http://homing\.test/u/[A-Za-z0-9_-]+)>")


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        provider_timeout_seconds=1,
        alert_slack_webhook_url=sandbox.base_url + SLACK_PATH,
        public_url=PUBLIC,
    )


async def marketing_send(
    services: Services, tenant: TenantClient, sb: Sandbox, vendor: str, **to: Any
) -> tuple[dict[str, Any], str]:
    """Send one email in the ``digest`` category, deliver it, and return the job and
    the unsubscribe link its message carried."""
    response = await email_by_recipient(tenant, category="digest", **to)
    assert response.status_code == 202, response.text
    assert await deliver(services) == 1
    body = await job(tenant, response.json()["id"])
    messages = [m for m in await sb.messages(vendor) if m["job_id"] == body["id"]]
    [message] = messages
    recorded = dict((name, value) for name, value in fields(message, vendor))
    assert recorded["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    match = LINK.fullmatch(recorded["List-Unsubscribe"])
    assert match is not None, recorded
    return body, match.group(1)


async def digest(tenant: TenantClient) -> None:
    await put_category(tenant, "digest", kind="marketing", default={"email": True})


@pytest.mark.parametrize("vendor", ["sendgrid", "resend", "postmark", "mailgun", "smtp"])
async def test_a_marketing_email_carries_a_working_one_click_link(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, vendor: str
) -> None:
    credentials = smtp_credentials(sandbox) if vendor == "smtp" else None
    await register(tenant, sandbox, vendor, 1, credentials=credentials)
    await digest(tenant)
    await put_recipient(tenant, "user-1", email="ada@example.com")
    first, link = await marketing_send(services, tenant, sb, vendor, recipient="user-1")
    assert first["status"] == "COMPLETED"
    page = await tenant.api.get(link)
    assert page.status_code == 200 and "<button" in page.text
    assert "set-cookie" not in page.headers
    done = await tenant.api.post(link, data=ONE_CLICK)
    assert done.status_code == 200, done.text
    assert "set-cookie" not in done.headers
    prefs = await tenant.get("/v1/recipients/user-1/preferences")
    assert prefs.json()["categories"]["digest"]["email"] is False
    again = await email_by_recipient(tenant, recipient="user-1", category="digest")
    stopped = await job(tenant, again.json()["id"])
    assert (stopped["status"], stopped["error_class"]) == ("SUPPRESSED", "preference")


async def test_a_get_of_the_link_unsubscribes_nobody(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await digest(tenant)
    await put_recipient(tenant, "user-2", email="grace@example.com")
    _, link = await marketing_send(services, tenant, sb, "resend", recipient="user-2")
    for _ in range(3):
        assert (await tenant.api.get(link)).status_code == 200
    prefs = await tenant.get("/v1/recipients/user-2/preferences")
    assert prefs.json()["categories"]["digest"]["email"] is True
    again = await email_by_recipient(tenant, recipient="user-2", category="digest")
    assert (await job(tenant, again.json()["id"]))["status"] == "PENDING"


async def test_a_replayed_post_is_200_with_one_change_and_one_event(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "postmark", 1)
    await digest(tenant)
    await put_recipient(tenant, "user-3", email="alan@example.com")
    _, link = await marketing_send(services, tenant, sb, "postmark", recipient="user-3")
    for _ in range(3):
        assert (await tenant.api.post(link, data=ONE_CLICK)).status_code == 200
    log = await tenant.get("/v1/audit-log", params={"action": "recipient.unsubscribed"})
    assert log.status_code == 200, log.text
    [event] = log.json()["data"]
    assert event["changes"] == {"categories": {"digest": {"email": False}}}
    assert event["actor"]["kind"] == "system"


async def test_an_address_only_send_unsubscribes_that_address_from_that_category(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await digest(tenant)
    await put_category(tenant, "offers", kind="marketing")
    _, link = await marketing_send(services, tenant, sb, "resend", to="Ada <ada@example.com>")
    assert (await tenant.api.post(link, data=ONE_CLICK)).status_code == 200
    again = await email_by_recipient(tenant, to="ADA@Example.com", category="digest")
    stopped = await job(tenant, again.json()["id"])
    assert (stopped["status"], stopped["error_class"]) == ("SUPPRESSED", "preference")
    other = await email_by_recipient(tenant, to="ada@example.com", category="offers")
    assert (await job(tenant, other.json()["id"]))["status"] == "PENDING"
    someone = await email_by_recipient(tenant, to="grace@example.com", category="digest")
    assert (await job(tenant, someone.json()["id"]))["status"] == "PENDING"


async def test_a_transactional_email_carries_no_unsubscribe_field(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await put_category(tenant, "receipts")
    await put_recipient(tenant, "user-4", email="ada@example.com")
    response = await email_by_recipient(tenant, recipient="user-4", category="receipts")
    assert response.status_code == 202, response.text
    assert await deliver(services) == 1
    [message] = await sb.messages("resend")
    assert not [name for name, _ in message["headers"] if name.startswith("List-Unsubscribe")]


async def test_a_template_rendered_for_a_recipient_gets_both_links(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await digest(tenant)
    await put_recipient(tenant, "user-5", email="ada@example.com")
    await make_template(tenant, "news")
    text = "Stop: {{ unsubscribe_url }} Choose: {{ preferences_url }}"
    await publish(tenant, "news", email={"subject": "News", "text": text})
    response = await tenant.post(
        "/v1/notifications/email",
        json={"recipient": "user-5", "category": "digest", "from": FROM, "template": "news"},
    )
    assert response.status_code == 202, response.text
    assert await deliver(services) == 1
    [message] = await sb.messages("resend")
    found = re.fullmatch(r"Stop: (\S+) Choose: (\S+)", message["text"])
    assert found is not None, message["text"]
    unsubscribe, preferences = found.groups()
    assert dict(message["headers"])["List-Unsubscribe"] == f"<{unsubscribe}>"
    assert preferences.startswith(PUBLIC + "/p/")
    page = await tenant.api.get(preferences)
    assert page.status_code == 200 and "Digest" in page.text


async def test_the_unsubscribe_mailbox_is_a_mailto_beside_the_link(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await digest(tenant)
    changed = await tenant.patch("/v1/settings", json={"unsubscribe_mailbox": "Unsub@Acme.example"})
    assert changed.status_code == 200, changed.text
    assert changed.json()["unsubscribe_mailbox"] == "unsub@acme.example"
    response = await email_by_recipient(tenant, to="ada@example.com", category="digest")
    assert response.status_code == 202, response.text
    assert await deliver(services) == 1
    [message] = await sb.messages("resend")
    value = dict(message["headers"])["List-Unsubscribe"]
    link, mailto = value.split(", ")
    assert LINK.fullmatch(link) is not None
    assert mailto == "<mailto:unsub@acme.example?subject=unsubscribe>"


async def test_the_preference_link_of_the_api_opens_the_page(tenant: TenantClient) -> None:
    await digest(tenant)
    await put_recipient(tenant, "user-6", email="ada@example.com")
    answer = await tenant.get("/v1/recipients/user-6/preference-link")
    assert answer.status_code == 200, answer.text
    url = answer.json()["url"]
    assert url.startswith(PUBLIC + "/p/")
    assert (await tenant.api.get(url)).status_code == 200
    missing = await tenant.get("/v1/recipients/nobody/preference-link")
    assert missing.status_code == 404
