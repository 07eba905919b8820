"""A tenant's console pages over the real API and the sandbox: the overview, finding a
sent message with its attempts, retrying a failed one, redriving dead letters, API
keys shown once, and a viewer refused every change."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import httpx

from homing.clock import ManualClock
from homing.models import Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, deliver, job
from tests.console_helpers import add_user, browser, sign_in
from tests.dead_letter_helpers import dead_letter
from tests.e2e.conftest import register, send


async def test_a_sent_message_is_found_with_its_attempts(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(tenant, to="grace@example.com", subject="Your receipt")
    await send(tenant, to="alan@example.com", subject="Another one")
    assert await deliver(services) == 2
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.VIEWER)
    async with browser(services) as client:
        await sign_in(client, "ada@example.com")
        base = f"/t/{tenant.tenant_id}"
        found = await client.get(f"{base}/messages", params={"to": "Grace@Example.com"})
        assert found.status_code == 200
        assert "Your receipt" in found.text and "Another one" not in found.text
        assert f"{base}/messages/{job_id}" in found.text
        page = await client.get(f"{base}/messages/{job_id}")
        overview = await client.get(f"{base}/")
    assert page.status_code == 200
    assert "resend" in page.text and "success" in page.text and "HTTP 200" in page.text
    assert "completed" in page.text
    assert overview.status_code == 200
    assert "<svg" in overview.text and "2 delivered, 0 failed" in overview.text


async def test_the_status_and_channel_filters_take_any_case(
    services: Services, tenant: TenantClient
) -> None:
    """``?status=failed`` (as the list writes it) finds the failed messages, and the form
    shows the status chosen."""
    letter = await services.dead_letter_store.get(
        tenant.tenant_id, await dead_letter(services, tenant, error="resend answered 503")
    )
    delivered = await send(tenant, subject="Delivered fine")
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.VIEWER)
    async with browser(services) as client:
        await sign_in(client, "ada@example.com")
        base = f"/t/{tenant.tenant_id}/messages"
        lower = await client.get(base, params={"status": "failed", "channel": "EMAIL"})
        upper = await client.get(base, params={"status": "FAILED"})
    for found in (lower, upper):
        assert found.status_code == 200, found.text
        assert f"{base}/{letter.job_id}" in found.text and f"{base}/{delivered}" not in found.text
        assert '<option value="FAILED" selected>' in found.text
    assert '<option value="email" selected>' in lower.text


async def test_the_date_examples_follow_the_clock(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    """The From and Until fields' examples are a week ago and now, not a fixed day."""
    await add_user(services, "ops@homing.example", tenant.tenant_id, Role.VIEWER, operator=True)
    pages = {}
    for moment in ("2027-03-09T08:05", "2031-11-30T23:59"):
        clock.advance(datetime.fromisoformat(moment).replace(tzinfo=UTC).timestamp() - clock.now())
        async with browser(services) as client:
            await sign_in(client, "ops@homing.example")
            for path in (f"/t/{tenant.tenant_id}/messages", "/operator/dead-letters"):
                pages[moment, path] = await client.get(path)
    for (moment, path), page in pages.items():
        week_ago = (datetime.fromisoformat(moment) - timedelta(days=7)).date().isoformat()
        assert page.status_code == 200, path
        assert f'placeholder="{week_ago}"' in page.text, path
        assert f'placeholder="{moment}"' in page.text, path
        assert "2026-05-01" not in page.text, path


async def test_a_bad_search_says_which_field(services: Services, tenant: TenantClient) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.VIEWER)
    async with browser(services) as client:
        await sign_in(client, "ada@example.com")
        base = f"/t/{tenant.tenant_id}/messages"
        bad_date = await client.get(base, params={"since": "yesterday"})
        bad_to = await client.get(base, params={"to": "not an address"})
        reversed_ = await client.get(base, params={"since": "2026-05-02", "until": "2026-05-01"})
    assert bad_date.status_code == 422 and "From: a date like" in bad_date.text
    assert bad_to.status_code == 422 and "Recipient:" in bad_to.text
    assert reversed_.status_code == 422 and "must not be after" in reversed_.text


async def test_an_owner_retries_a_failed_message_and_redrives_dead_letters(
    services: Services, tenant: TenantClient
) -> None:
    first = await dead_letter(services, tenant, provider="postmark")
    await dead_letter(services, tenant, provider="resend")
    letter = await services.dead_letter_store.get(tenant.tenant_id, first)
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        base = f"/t/{tenant.tenant_id}"
        listed = await client.get(f"{base}/dead-letters")
        assert listed.status_code == 200 and "provider answered 500" in listed.text
        counted = await client.post(
            f"{base}/dead-letters/redrive",
            data={"csrf": csrf, "dry_run": "1"},
            follow_redirects=True,
        )
        assert "2 dead letters would be redriven" in counted.text
        assert (await job(tenant, letter.job_id))["status"] == "FAILED"
        redriven = await client.post(
            f"{base}/dead-letters/redrive",
            data={"csrf": csrf, "provider": "resend"},
            follow_redirects=True,
        )
        assert "1 redriven" in redriven.text
        retried = await client.post(
            f"{base}/messages/{letter.job_id}/retry", data={"csrf": csrf}, follow_redirects=True
        )
    assert retried.status_code == 200 and "Queued again" in retried.text
    assert (await job(tenant, letter.job_id))["status"] == "PENDING"


async def test_a_new_api_key_is_shown_once_and_works(
    services: Services, tenant: TenantClient, api: httpx.AsyncClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        base = f"/t/{tenant.tenant_id}/api-keys"
        made = await client.post(base, data={"csrf": csrf, "name": "production"})
        assert made.status_code == 303 and made.headers["location"] == base
        assert "hk_" not in made.headers["location"] + made.text
        shown = await client.get(base)
        key = re.search(r'class="secret" id="flash-secret-1">(hk_[A-Za-z0-9_-]+)<', shown.text)
        assert shown.status_code == 200 and key, shown.text
        assert shown.headers["cache-control"] == "no-store"
        listed = await client.get(base)
        assert key.group(1) not in listed.text and "production" in listed.text
        usable = await api.get("/v1/usage", headers={"Authorization": f"Bearer {key.group(1)}"})
        assert usable.status_code == 200
        ids = re.findall(r"/api-keys/([0-9a-f-]{36})/revoke", listed.text)
        assert len(ids) == 2
        for key_id in ids[:-1]:
            gone = await client.post(f"{base}/{key_id}/revoke", data={"csrf": csrf})
            assert gone.status_code == 303
            assert "API key revoked" in (await client.get(base)).text
        last = await client.post(f"{base}/{ids[-1]}/revoke", data={"csrf": csrf})
    assert last.status_code == 409 and "last API key" in last.text


async def test_a_viewer_is_refused_every_change_on_the_server(
    services: Services, tenant: TenantClient
) -> None:
    letter_id = await dead_letter(services, tenant)
    letter = await services.dead_letter_store.get(tenant.tenant_id, letter_id)
    keys = await services.keys.live(tenant.tenant_id)
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    base = f"/t/{tenant.tenant_id}"
    async with browser(services) as client:
        csrf = await sign_in(client, "vic@example.com")
        page = await client.get(f"{base}/messages/{letter.job_id}")
        assert "Retry this message" not in page.text
        for path, data in (
            (f"{base}/messages/{letter.job_id}/retry", {}),
            (f"{base}/dead-letters/redrive", {}),
            (f"{base}/api-keys", {"name": "mine"}),
            (f"{base}/api-keys/{keys[0].id}/revoke", {}),
        ):
            refused = await client.post(path, data={"csrf": csrf, **data})
            assert refused.status_code == 403, path
            assert "Viewers can look" in refused.text
    assert (await job(tenant, letter.job_id))["status"] == "FAILED"
    assert len(await services.keys.live(tenant.tenant_id)) == 1
