"""The message page shows the message itself, over the real API and the sandbox: an
email's addresses, subject, text and HTML (in a sandboxed frame), an SMS's number,
segments and encoding, a chat message's target and text, a webhook's URL, event type,
payload and last response; a templated send names its template; after payload
retention the page says when the content was scrubbed. The Messages list has a To
column, and ``GET /v1/jobs/{id}`` answers ``to`` on every channel."""

from __future__ import annotations

import html
import re
import time
from pathlib import Path

import pytest

from homing.clock import ManualClock
from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.chat_helpers import register_telegram, send_chat
from tests.conftest import TenantClient, deliver, job
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.conftest import register, send
from tests.e2e.test_scheduled_sends import rfc3339
from tests.e2e.test_sms import register_sms, send_sms
from tests.e2e.test_templates import make_template, publish, send_templated
from tests.fixtures import settings_for
from tests.webhooks.conftest import send_webhook
from tests.webhooks.receiver import Receiver, Reply

DAY = 86_400.0


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    """Test settings, with webhooks allowed to the loopback ``receiver``."""
    return settings_for(database_url, tmp_path, secret_key, webhook_allowed_networks="127.0.0.0/8")


HTML = '<p>Hello <b>Ada</b>, your receipt is <a href="https://example.com/r">here</a>.</p>'


async def _page(services: Services, tenant: TenantClient, job_id: str) -> str:
    """The message page of ``job_id`` as a viewer of the tenant reads it (200 asserted)."""
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    async with browser(services) as client:
        await sign_in(client, "vic@example.com")
        page = await client.get(f"/t/{tenant.tenant_id}/messages/{job_id}")
    assert page.status_code == 200, page.text
    return page.text


def _fact(page: str, label: str) -> str:
    """The value shown beside ``label`` in the page's facts."""
    found = re.search(rf"<dt>{re.escape(label)}</dt><dd>(.*?)</dd>", page, re.S)
    assert found, f"no {label} on the page"
    return html.unescape(found.group(1))


async def test_an_email_page_shows_addresses_subject_text_and_a_sandboxed_html_frame(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(
        tenant, to="grace@example.com", subject="Your receipt", text="Receipt #42", html=HTML
    )
    assert await deliver(services) == 1
    page = await _page(services, tenant, job_id)
    assert _fact(page, "To") == "grace@example.com"
    assert _fact(page, "From") == "Acme <hello@acme.example>"
    assert _fact(page, "Subject") == "Your receipt"
    assert _fact(page, "Reply-To").startswith("—")
    assert '<pre class="body" data-part="text">Receipt #42</pre>' in page
    [frame] = re.findall(r"<iframe[^>]*>", page)
    assert " sandbox " in frame and "allow-" not in frame
    srcdoc = html.unescape(re.search(r'srcdoc="([^"]*)"', frame).group(1))  # type: ignore[union-attr]
    assert srcdoc.index("Content-Security-Policy") < srcdoc.index(HTML)
    assert "default-src 'none'" in srcdoc and "img-src data:" in srcdoc
    # The body reaches the page only escaped into the attribute, never as markup.
    assert "<b>Ada</b>" not in page
    assert (await job(tenant, job_id))["to"] == "grace@example.com"


async def test_the_messages_list_shows_each_message_address(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, receiver: Receiver
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await send(tenant, to="grace@example.com", subject="Your receipt")
    await send_webhook(tenant, f"{receiver.url}/hooks/orders")
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    async with browser(services) as client:
        await sign_in(client, "vic@example.com")
        listed = await client.get(f"/t/{tenant.tenant_id}/messages")
    assert listed.status_code == 200
    cells = re.findall(r'<td class="address">(.*?)</td>', listed.text)
    assert cells == [f"{receiver.url}/hooks/orders", "grace@example.com"]


async def test_an_sms_page_shows_number_sender_segments_and_encoding(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    text = "Your code is 1234 — ça marche"  # the dash and ç are not GSM-7: UCS-2
    job_id = await send_sms(tenant, body=text * 3)
    assert await deliver(services) == 1
    page = await _page(services, tenant, job_id)
    assert _fact(page, "To") == "+14155552671"
    assert _fact(page, "From") == "the provider account's own number"
    assert _fact(page, "Encoding") == "UCS-2"
    assert _fact(page, "Segments") == f"2 ({len(text) * 3} characters)"
    assert html.escape(text * 3, quote=False) in page
    assert (await job(tenant, job_id))["to"] == "+14155552671"


async def test_a_chat_page_shows_the_chat_target_and_text(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register_telegram(tenant, sandbox)
    job_id = await send_chat(tenant, to="4242", text="Deploy finished: all green")
    assert await deliver(services) == 1
    page = await _page(services, tenant, job_id)
    assert _fact(page, "To") == "4242"
    assert _fact(page, "Chat") == "telegram"
    assert '<pre class="body" data-part="text">Deploy finished: all green</pre>' in page
    assert (await job(tenant, job_id))["to"] == "4242"


async def test_a_webhook_page_shows_url_event_type_payload_and_the_last_response(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    receiver.reply(Reply(status=500, body=b"database is down"))
    url = f"{receiver.url}/hooks/orders"
    job_id = await send_webhook(tenant, url, event_type="order.paid")
    assert await deliver(services) == 1
    page = await _page(services, tenant, job_id)
    assert _fact(page, "URL") == url
    assert _fact(page, "Event type") == "order.paid"
    shown = re.search(r'data-part="payload">(.*?)</pre>', page, re.S)
    assert shown and html.unescape(shown.group(1)) == '{\n  "event": "order.paid",\n  "id": 42\n}'
    assert "<dt>Status</dt><dd>HTTP 500</dd>" in page
    assert 'data-part="response">database is down</pre>' in page
    assert (await job(tenant, job_id))["to"] == url


async def test_a_templated_send_names_its_template_key_version_and_locale(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await make_template(tenant, name="Welcome mail")
    email = {"subject": "Welcome, {{ name }}", "text": "Hello {{ name }}."}
    await publish(tenant, "welcome", email=email)
    job_id = await send_templated(tenant, template="welcome", data={"name": "Ann"})
    assert await deliver(services) == 1
    page = await _page(services, tenant, job_id)
    assert _fact(page, "Template") == "welcome"
    assert _fact(page, "Template version") == "1"
    assert _fact(page, "Template locale") == "en"
    assert _fact(page, "Subject") == "Welcome, Ann"


async def test_a_scrubbed_message_says_when_instead_of_blank_fields(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, clock: ManualClock
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(tenant, subject="Your code", text="123456", html="<b>123456</b>")
    assert await deliver(services) == 1
    clock.advance(services.settings.retention.payload_days * DAY + DAY)
    assert (await services.retention().run()).payloads == 1
    scrubbed_at = (await services.jobs.get(tenant.tenant_id, job_id))[0].payload_scrubbed_at
    assert scrubbed_at is not None
    page = await _page(services, tenant, job_id)
    said = f"The content was scrubbed on {scrubbed_at:%Y-%m-%d %H:%M:%S} UTC"
    assert said in page
    assert "123456" not in page and "removed by retention" not in page
    assert "<dt>Subject</dt>" not in page and "<iframe" not in page
    assert _fact(page, "To") == "ada@example.com"
    body = await job(tenant, job_id)
    assert body["to"] == "ada@example.com" and body["payload_scrubbed_at"] is not None


async def test_a_scheduled_message_shows_when_it_is_due_on_its_page_and_in_the_list(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, clock: ManualClock
) -> None:
    await register(tenant, sandbox, "resend", 1)
    due = clock.now() + 3 * DAY
    job_id = await send(tenant, send_at=rfc3339(due))
    shown = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(due))
    page = await _page(services, tenant, job_id)
    assert _fact(page, "Due") == f"{shown} <small>(send_at requested)</small>"
    async with browser(services) as client:
        await sign_in(client, "vic@example.com")
        listed = await client.get(f"/t/{tenant.tenant_id}/messages")
    assert f"<small>due {shown}</small>" in listed.text
    # Once delivered, the page still says when it was due; the list no longer does.
    clock.advance(3 * DAY + 1)
    assert await deliver(services) == 1
    async with browser(services) as client:
        await sign_in(client, "vic@example.com")
        page = (await client.get(f"/t/{tenant.tenant_id}/messages/{job_id}")).text
    assert _fact(page, "Was due") == f"{shown} <small>(send_at requested)</small>"
