"""Send a test (``/t/{tenant}/send-test``): an owner queues a real message on each
channel, raw or from a published template, through the API's admission, and lands on
its message page with a flash; the sandbox receives it. Each refusal shows the form
again with what was typed and the reason beside its field; a channel without a
provider is shown disabled with a link to the providers page; viewers and forms
without the CSRF token change nothing."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.api.schemas.chat import MAX_TEXT
from homing.api.schemas.sms import MAX_SMS_CHARACTERS, MAX_SMS_SEGMENTS
from homing.api.schemas.webhooks import MAX_EVENT_TYPE
from homing.api.templated import MAX_SUBJECT
from homing.console import send_test
from homing.domain.job_search import JobFilter
from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.chat_helpers import register_telegram
from tests.conftest import TenantClient, deliver, job, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.conftest import register
from tests.e2e.test_sms import register_sms
from tests.e2e.test_templates import make_template, publish
from tests.fixtures import settings_for

OWNER = "olive@example.com"


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    """Test settings, with webhooks allowed to the loopback sandbox's receiver."""
    return settings_for(database_url, tmp_path, secret_key, webhook_allowed_networks="127.0.0.0/8")


async def _post(
    services: Services, tenant: TenantClient, form: dict[str, str], email: str = OWNER
) -> httpx.Response:
    """The form posted by a signed-in owner (added once), with the session's CSRF."""
    if await services.people.user(email) is None:
        await add_user(services, email, tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, email)
        return await client.post(f"/t/{tenant.tenant_id}/send-test", data={"csrf": csrf, **form})


async def _sent(services: Services, tenant: TenantClient, form: dict[str, str]) -> dict[str, Any]:
    """Post ``form``, follow it to the message page, deliver; the job as the API shows it."""
    if await services.people.user(OWNER) is None:
        await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        answer = await client.post(f"/t/{tenant.tenant_id}/send-test", data={"csrf": csrf, **form})
        assert answer.status_code == 303, answer.text
        where = answer.headers["location"]
        found = re.fullmatch(rf"/t/{tenant.tenant_id}/messages/([0-9a-f-]+)", where)
        assert found, where
        page = await client.get(where)
    assert page.status_code == 200 and "Test queued on" in page.text
    assert "<dt>Sent as</dt><dd>a test, from the console</dd>" in page.text
    await deliver(services)
    return await job(tenant, found.group(1))


def _problem(page: str, name: str) -> str:
    """The reason shown beside the field ``name``."""
    found = re.search(rf'<span class="field-error" id="{name}-error"[^>]*>(.*?)</span>', page)
    assert found, f"no problem beside {name}"
    return html.unescape(found.group(1))


async def _queued(services: Services, tenant: TenantClient) -> int:
    return len((await services.jobs.page(JobFilter(tenant_id=tenant.tenant_id), limit=50)).jobs)


EMAIL = {
    "channel": "email",
    "to": "ada@example.com",
    "from": "Acme <hello@acme.example>",
    "subject": "Trying Homing",
    "text": "It works",
}


async def test_a_raw_email_test_is_delivered_and_marked_as_a_test(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    sent = await _sent(services, tenant, EMAIL)
    assert sent["status"] == "COMPLETED" and sent["channel"] == "email"
    [message] = sandbox.state.messages("resend")
    assert message.to == ("ada@example.com",) and message.subject == "Trying Homing"
    stored, _ = await services.jobs.get(tenant.tenant_id, sent["id"])
    assert stored.payload["test"] is True


async def test_a_raw_sms_test_goes_out_with_its_segments(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    form = {"channel": "sms", "sms_to": "+1 415 555 2671", "body": "Your code is 1234"}
    sent = await _sent(services, tenant, form)
    assert sent["status"] == "COMPLETED" and sent["channel"] == "sms"
    [message] = sandbox.state.messages("twilio")
    assert message.to == ("+14155552671",) and message.text == "Your code is 1234"


async def test_a_raw_chat_test_goes_to_the_first_chat_provider(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register_telegram(tenant, sandbox)
    sent = await _sent(services, tenant, {"channel": "chat", "chat_to": "4242", "chat_text": "Hi"})
    assert sent["status"] == "COMPLETED" and sent["channel"] == "chat"
    [message] = sandbox.state.messages("telegram")
    assert message.to == ("4242",) and message.text == "Hi"


async def test_a_raw_webhook_test_reaches_the_sandbox_receiver(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    form = {
        "channel": "webhook",
        "url": f"{sandbox.base_url}/hooks/console",
        "event_type": "order.created",
        "payload": '{"order": 42}',
    }
    sent = await _sent(services, tenant, form)
    assert sent["status"] == "COMPLETED" and sent["channel"] == "webhook"
    [hook] = sandbox.state.hooks
    assert hook["name"] == "console" and json.loads(hook["body"]) == {"order": 42}
    assert hook["headers"]["x-webhook-event"] == "order.created"


async def test_each_channel_sends_from_a_published_template(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await register_sms(tenant, sandbox, "twilio", 1)
    await register_telegram(tenant, sandbox)
    await make_template(tenant, "welcome")
    await publish(
        tenant,
        "welcome",
        email={"subject": "Hi {{ name }}", "text": "Welcome, {{ name }}"},
        sms={"body": "Welcome, {{ name }}"},
        chat={"text": "Welcome, {{ name }}"},
        webhook={"payload": {"name": "{{ name }}"}},
    )
    data = {"template": "welcome", "data": '{"name": "Ada"}'}
    forms = [
        {**EMAIL, "subject": "", "text": "", **data},
        {"channel": "sms", "sms_to": "+14155552671", **data},
        {"channel": "chat", "chat_to": "4242", **data},
        {"channel": "webhook", "url": f"{sandbox.base_url}/hooks/t", **data},
    ]
    for form in forms:
        sent = await _sent(services, tenant, form)
        assert sent["status"] == "COMPLETED", sent
        stored, _ = await services.jobs.get(tenant.tenant_id, sent["id"])
        assert stored.payload["template"]["key"] == "welcome"
        assert stored.payload["template"]["test"] is True
    assert sandbox.state.messages("resend")[0].subject == "Hi Ada"
    assert sandbox.state.messages("twilio")[0].text == "Welcome, Ada"
    assert sandbox.state.messages("telegram")[0].text == "Welcome, Ada"
    assert json.loads(sandbox.state.hooks[0]["body"]) == {"name": "Ada"}


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        ({"to": "not an address"}, "to", "Type one address"),
        ({"from": "a@b.example\r\nBcc: x@y.example"}, "from", "One line"),
        ({"subject": "x" * (MAX_SUBJECT + 1)}, "subject", "At most 998 characters"),
        ({"text": "", "html": ""}, "text", "Type a text or an HTML body"),
        ({"template": "nope"}, "template", "No published template"),
        ({"template": "welcome", "data": "[1, 2"}, "data", "The data is not JSON"),
    ],
)
async def test_a_refused_email_shows_the_form_again_with_the_reason_beside_its_field(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    change: dict[str, str],
    field: str,
    reason: str,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    answer = await _post(services, tenant, {**EMAIL, **change})
    assert answer.status_code in (413, 422), answer.text
    assert _problem(answer.text, field).startswith(reason)
    if field == "subject":  # refused, not cut, and not echoed
        assert "x" * 100 not in answer.text
    else:
        assert html.escape(change[field]) in answer.text
    assert await _queued(services, tenant) == 0


async def test_another_tenants_template_is_unknown_here(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer
) -> None:
    acme = await make_tenant(services, api, "acme")
    mallory = await make_tenant(services, api, "mallory")
    await register(acme, sandbox, "resend", 1)
    await register(mallory, sandbox, "resend", 1)
    await make_template(acme, "secret")
    await publish(acme, "secret", email={"subject": "only acme", "text": "only acme"})
    answer = await _post(services, mallory, {**EMAIL, "template": "secret"}, "eve@example.com")
    assert answer.status_code == 422
    assert _problem(answer.text, "template").startswith("No published template")
    assert "only acme" not in answer.text
    assert await _queued(services, mallory) == 0


async def test_a_channel_without_a_provider_is_disabled_and_refused(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        await sign_in(client, OWNER)
        page = await client.get(f"/t/{tenant.tenant_id}/send-test?channel=sms")
    assert page.status_code == 200
    assert '<span class="disabled" aria-disabled="true">SMS</span>' in page.text
    assert f'href="/t/{tenant.tenant_id}/providers"' in page.text
    assert 'name="sms_to"' not in page.text
    answer = await _post(
        services, tenant, {"channel": "sms", "sms_to": "+14155552671", "body": "x"}
    )
    assert answer.status_code == 422
    assert re.search(r"data-problem>No enabled sms provider", answer.text, re.I), answer.text
    assert await _queued(services, tenant) == 0


async def test_a_viewer_and_a_form_without_csrf_change_nothing(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    where = f"/t/{tenant.tenant_id}/send-test"
    async with browser(services) as client:
        csrf = await sign_in(client, "vic@example.com")
        seen = await client.get(where)
        posted = await client.post(where, data={"csrf": csrf, **EMAIL})
        nav = await client.get(f"/t/{tenant.tenant_id}/")
    async with browser(services) as client:
        await sign_in(client, OWNER)
        forged = await client.post(where, data=EMAIL)
    assert seen.status_code == posted.status_code == forged.status_code == 403
    assert "Send a test" not in nav.text
    assert await _queued(services, tenant) == 0


async def test_the_owners_navigation_links_the_page(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        await sign_in(client, OWNER)
        home = await client.get(f"/t/{tenant.tenant_id}/")
    assert f'href="/t/{tenant.tenant_id}/send-test"' in home.text


def test_the_forms_bounds_are_the_apis() -> None:
    assert send_test.MAX_SUBJECT == MAX_SUBJECT
    assert send_test.MAX_SMS_CHARACTERS == MAX_SMS_CHARACTERS
    assert send_test.MAX_SMS_SEGMENTS == MAX_SMS_SEGMENTS
    assert send_test.MAX_TEXT == MAX_TEXT
    assert send_test.MAX_EVENT_TYPE == MAX_EVENT_TYPE
