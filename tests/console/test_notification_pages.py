"""The console shows multi-channel notifications, over the real API and the sandbox, on
the injected clock: a message that is a notification's step names its notification
and merges the steps into its timeline in time order; a notification's page shows each
step (channel, status, why, its message) and, for one gathered into a digest, the
digest; the list pages newest first and filters by status; another tenant's
notification is 404 and a malformed id 422."""

from __future__ import annotations

import html
import re

import httpx

from homing.clock import ManualClock
from homing.domain.notification_search import NotificationFilter
from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, deliver, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.conftest import Sandbox
from tests.e2e.test_digests import comment, sweep
from tests.e2e.test_digests import ready as digest_ready
from tests.e2e.test_notifications import notify, ready, shown

VIEWER = "vic@example.com"


async def _pages(services: Services, tenant: TenantClient, *paths: str) -> list[str]:
    """Each page of ``paths`` (under the tenant) as a viewer reads it (200 asserted)."""
    await add_user(services, VIEWER, tenant.tenant_id, Role.VIEWER)
    texts = []
    async with browser(services) as client:
        await sign_in(client, VIEWER)
        for path in paths:
            page = await client.get(f"/t/{tenant.tenant_id}/{path}")
            assert page.status_code == 200, page.text
            texts.append(page.text)
    return texts


def _fact(page: str, label: str) -> str:
    found = re.search(rf"<dt>{re.escape(label)}</dt><dd>(.*?)</dd>", page, re.S)
    assert found, f"no {label} on the page"
    return html.unescape(found.group(1))


def _timeline(page: str) -> list[str]:
    """The timeline's lines as kinds: ``attempt``, ``event``, ``step 0``, ``step 1``…"""
    lines = re.findall(r'<li data-kind="(\w+)"(?: data-step="(\d+)")?', page)
    return [kind + (f" {step}" if step else "") for kind, step in lines]


def _step_rows(page: str) -> list[str]:
    """The steps table's rows, as text with the markup taken out."""
    rows = re.findall(r'<tr data-step="\d+">(.*?)</tr>', page, re.S)
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", r)).split()) for r in rows]


async def test_a_step_message_names_its_notification_and_merges_the_steps_in_time_order(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await ready(tenant, sandbox, email="ada@example.com", phone="+14155552671")
    await sb.fault("twilio", status=401)  # credentials refused: the SMS job fails
    body = await notify(tenant, channels=["sms", "email"], strategy="first")
    clock.advance(10)
    await deliver(services)
    assert await services.notifications.sweep() == 1  # SMS failed, email made
    clock.advance(10)
    assert await deliver(services) == 1
    assert await services.notifications.sweep() == 1
    done = await shown(tenant, body["id"])
    sms_job, email_job = (s["job_id"] for s in done["steps"])
    email_page, sms_page = await _pages(
        services, tenant, f"messages/{email_job}", f"messages/{sms_job}"
    )
    link = f'<a href="/t/{tenant.tenant_id}/notifications/{body["id"]}">'
    assert link in email_page and link in sms_page
    assert "(step 2 of 2, first: succeeded)" in _fact(email_page, "Notification")
    # The SMS step failed at +10 s, the email was sent at +20 s, then accepted.
    assert _timeline(email_page) == ["step 0", "attempt", "step 1"]
    sms_lines = _timeline(sms_page)
    assert sms_lines[-2:] == ["step 0", "step 1"] and set(sms_lines[:-2]) == {"attempt"}
    assert f'<a href="/t/{tenant.tenant_id}/messages/{sms_job}">its message</a>' in email_page
    assert "Notification step 2: email</strong> · " in email_page
    assert " · this message" in email_page


async def test_all_shows_each_step_and_why_a_channel_was_skipped(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await ready(tenant, sandbox, email="ada@example.com")  # no phone
    body = await notify(tenant, channels=["in_app", "sms", "email"], strategy="all")
    assert await deliver(services) == 1
    assert await services.notifications.sweep() == 1
    done = await shown(tenant, body["id"])
    in_app_job, _, email_job = (s["job_id"] for s in done["steps"])
    page, message, listed, in_app = await _pages(
        services,
        tenant,
        f"notifications/{body['id']}",
        f"messages/{email_job}",
        "notifications",
        f"messages/{in_app_job}",
    )
    assert _fact(page, "Recipient") == "<code>user-1</code>"
    assert _fact(page, "Template") == "report"
    assert _fact(page, "Strategy") == "all"
    assert "succeeded" in _fact(page, "Status")
    rows = _step_rows(page)
    assert rows[0].startswith("1 in_app accepted accepted accepted by a provider")
    assert rows[1].startswith("2 sms skipped unreachable the recipient has no address")
    assert rows[2].startswith("3 email accepted accepted")
    assert f'href="/t/{tenant.tenant_id}/messages/{email_job}">completed</a>' in page
    assert f'href="/t/{tenant.tenant_id}/messages/{in_app_job}">' in page
    # The message page shows the skipped channel too, with its reason.
    assert _timeline(message) == ["attempt", "step 0", "step 1", "step 2"]
    assert "<code>unreachable</code> (the recipient has no address on this channel)" in message
    assert f'<a href="/t/{tenant.tenant_id}/notifications/{body["id"]}">' in listed
    assert '<td class="address">user-1</td>' in listed
    # An in-app step's message names its feed item, not a URL.
    assert _fact(in_app, "Recipient") == "user-1"
    assert len(_fact(in_app, "Feed item")) == 36
    assert "<dt>URL</dt>" not in in_app


async def test_a_single_send_names_no_notification(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await ready(tenant, sandbox, email="ada@example.com")
    sent = await tenant.post(
        "/v1/notifications/email",
        json={"to": "ada@example.com", "from": "a@acme.example", "subject": "Hi", "text": "x"},
    )
    assert sent.status_code == 202, sent.text
    [page] = await _pages(services, tenant, f"messages/{sent.json()['id']}")
    assert "<dt>Notification</dt>" not in page
    assert "step" not in _timeline(page)


async def test_a_gathered_notification_shows_its_digest_open_then_sent(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    clock: ManualClock,
) -> None:
    await digest_ready(tenant, sandbox)
    first = await comment(tenant, "Bo", "nice")
    second = await comment(tenant, "Cy", "agreed")
    [before] = await _pages(services, tenant, f"notifications/{second['id']}")
    assert "gathered" in _fact(before, "Status")
    assert _fact(before, "Key") == "<code>comments</code>"
    assert "open" in _fact(before, "State")
    assert _fact(before, "Window").startswith("closes ")
    assert _fact(before, "Items").startswith("2 ")
    assert "this one is no. 2" in _fact(before, "Items")
    assert _step_rows(before) == []

    clock.advance(3600)
    assert await sweep(services) == 1
    assert await deliver(services) == 1
    await services.notifications.sweep()
    digest = (await shown(tenant, first["id"]))["digest"]
    async with browser(services) as client:
        await sign_in(client, VIEWER)
        after = (await client.get(f"/t/{tenant.tenant_id}/notifications/{first['id']}")).text
        sent_as = await client.get(
            f"/t/{tenant.tenant_id}/notifications/{digest['notification_id']}"
        )
    assert "sent" in _fact(after, "State")
    assert _fact(after, "Window").startswith("closed ")
    assert digest["notification_id"] in _fact(after, "Sent as")
    [row] = _step_rows(after)
    assert row.startswith("1 email accepted accepted")
    assert f"/t/{tenant.tenant_id}/messages/{digest['steps'][0]['job_id']}" in after
    assert sent_as.status_code == 200 and "<h2>Digest</h2>" not in sent_as.text


async def test_another_tenants_notification_is_not_found_and_a_malformed_id_is_refused(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    sandbox: SandboxServer,
) -> None:
    globex = await make_tenant(services, api, "Globex")
    await ready(globex, sandbox, email="ada@example.com")
    theirs = await notify(globex, channels=["email"], strategy="all")
    job_id = theirs["steps"][0]["job_id"]
    await add_user(services, VIEWER, tenant.tenant_id, Role.VIEWER)
    t = f"/t/{tenant.tenant_id}"
    async with browser(services) as client:
        await sign_in(client, VIEWER)
        codes = {
            path: (await client.get(path)).status_code
            for path in (
                f"{t}/notifications/{theirs['id']}",
                f"/t/{globex.tenant_id}/notifications/{theirs['id']}",
                f"{t}/messages/{job_id}",
                f"{t}/notifications/not-an-id",
                f"{t}/notifications/{'a' * 37}",
            )
        }
        listed = await client.get(f"{t}/notifications")
    assert list(codes.values()) == [404, 404, 404, 422, 422]
    assert theirs["id"] not in listed.text


async def test_the_list_pages_newest_first_and_filters_by_status(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await ready(tenant, sandbox, email="ada@example.com")
    made = [(await notify(tenant, channels=["email"], strategy="all"))["id"] for _ in range(3)]
    skipped = await notify(tenant, channels=["sms"], strategy="all")  # no phone: failed
    assert skipped["status"] == "failed"
    everyone = NotificationFilter(tenant.tenant_id)
    first = await services.notifications.page(everyone, 2, None)
    assert [n.id for n in first.notifications] == [skipped["id"], made[2]]
    assert first.next_cursor == made[2]
    rest = await services.notifications.page(everyone, 2, first.next_cursor)
    assert [n.id for n in rest.notifications] == [made[1], made[0]]
    assert rest.next_cursor is None
    running = await services.notifications.page(
        NotificationFilter(tenant.tenant_id, "running"), 10, None
    )
    assert [n.id for n in running.notifications] == made[::-1]
    assert running.notifications[0].steps == (("email", "queued"),)
    [failed] = await _pages(services, tenant, "notifications?status=failed")
    assert skipped["id"] in failed and made[0] not in failed
    assert 'option value="failed" selected' in failed
    async with browser(services) as client:
        await sign_in(client, VIEWER)
        refused = await client.get(f"/t/{tenant.tenant_id}/notifications?status=lost")
    assert refused.status_code == 422
    assert "Choose a status from the list." in refused.text
