"""The suppressions page: search by the start of an address and by channel, cursor
pages, add (read as ``POST /v1/suppressions`` reads it) and remove (the next send goes
again), audited as the API's twins; viewers read only."""

from __future__ import annotations

import re
from typing import get_args

from homing.api.schemas.suppressions import SuppressionCreate
from homing.channels import Channel
from homing.domain.audit import AuditFilter
from homing.domain.suppressions import ENTERED_REASONS
from homing.models import ActorKind, AuditAction, Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, deliver, job
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.conftest import register, send


def test_the_console_offers_the_reasons_the_api_takes() -> None:
    assert ENTERED_REASONS == get_args(SuppressionCreate.model_fields["reason"].annotation)


async def test_search_by_the_start_of_an_address_and_by_channel(
    services: Services, tenant: TenantClient
) -> None:
    store = services.suppressions
    for address in ("ada@example.com", "adam@example.org", "grace@example.com"):
        await store.add(tenant.tenant_id, Channel.EMAIL, address, "manual", "api")
    await store.add(tenant.tenant_id, Channel.SMS, "+14155552671", "opted_out", "twilio")
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    base = f"/t/{tenant.tenant_id}/suppressions"
    async with browser(services) as client:
        await sign_in(client, "vic@example.com")
        every = await client.get(base)
        assert every.status_code == 200 and 'aria-current="page">Suppressions' in every.text
        assert every.text.count("<tr>") == 1 + 4
        assert "Suppress an address" not in every.text and "/remove" not in every.text
        ada = await client.get(base, params={"q": " ADA"})
        assert "ada@example.com" in ada.text and "adam@example.org" in ada.text
        assert "grace@" not in ada.text
        sms = await client.get(base, params={"channel": "sms"})
        assert "+14155552671" in sms.text and "<code>ada@example.com" not in sms.text
        none = await client.get(base, params={"q": "zz%"})
        assert "No suppression matches" in none.text
        wild = await client.get(base, params={"q": "_da"})
        assert "<code>ada@example.com" not in wild.text
        bad = await client.get(base, params={"channel": "webhook"})
        assert bad.status_code == 422 and "Choose a channel" in bad.text


async def test_suppressions_page_by_cursor(services: Services, tenant: TenantClient) -> None:
    for n in range(53):
        await services.suppressions.add(
            tenant.tenant_id, Channel.EMAIL, f"user{n:02d}@example.com", "manual", "api"
        )
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    async with browser(services) as client:
        await sign_in(client, "vic@example.com")
        first = await client.get(f"/t/{tenant.tenant_id}/suppressions")
        more = re.search(r'<a href="([^"]+)">More suppressions</a>', first.text)
        assert more and "user49@" in first.text and "user50@" not in first.text
        second = await client.get(more.group(1).replace("&amp;", "&"))
    assert "user50@" in second.text and "user52@" in second.text and "user49@" not in second.text
    assert "More suppressions" not in second.text


async def test_an_owner_adds_and_removes_and_the_next_send_goes(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    ada = await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/suppressions"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        added = await client.post(
            base,
            data={"csrf": csrf, "channel": "email", "address": "Ada <ADA@Example.com>"},
            follow_redirects=True,
        )
        assert added.status_code == 200 and "<code>ada@example.com</code>" in added.text
        assert "Suppressed: nothing more is sent to ada@example.com" in added.text
        held = await send(tenant, to="ada@example.com")
        assert (await job(tenant, held))["status"] == "SUPPRESSED"
        removed = await client.post(
            f"{base}/remove",
            data={"csrf": csrf, "channel": "email", "address": "ada@example.com"},
            follow_redirects=True,
        )
        assert removed.status_code == 200 and "is sent again" in removed.text
        assert "removed=" not in str(removed.url)
        assert "is sent again" not in (await client.get(base)).text
        again = await client.post(
            f"{base}/remove", data={"csrf": csrf, "channel": "email", "address": "ada@example.com"}
        )
        assert again.status_code == 404
    sent = await send(tenant, to="ada@example.com")
    assert await deliver(services) == 1
    assert (await job(tenant, sent))["status"] == "COMPLETED"
    events, _ = await services.audit.page(
        AuditFilter(tenant_id=tenant.tenant_id), limit=10, cursor=None
    )
    ours = [e for e in events if e.actor.kind is ActorKind.USER]
    assert [e.action for e in ours] == [
        AuditAction.SUPPRESSION_REMOVED,
        AuditAction.SUPPRESSION_ADDED,
    ]
    assert all(e.actor.id == ada.id and e.target_id == "ada@example.com" for e in ours)
    assert ours[1].changes == {"channel": "email", "reason": "manual"}


async def test_a_number_is_read_as_the_api_reads_it(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/suppressions"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        added = await client.post(
            base,
            data={"csrf": csrf, "channel": "sms", "address": "+14155552671", "reason": "opted_out"},
            follow_redirects=True,
        )
        assert "+14155552671" in added.text and "opted_out" in added.text
        again = await client.post(
            base,
            data={"csrf": csrf, "channel": "sms", "address": "+14155552671"},
            follow_redirects=True,
        )
        assert "Already suppressed: +14155552671" in again.text and "opted_out" in again.text
        refused = await client.post(
            base, data={"csrf": csrf, "channel": "sms", "address": "not a number"}
        )
        assert refused.status_code == 422 and "Address to suppress" in refused.text
        api = await tenant.post(
            "/v1/suppressions", json={"channel": "sms", "address": "not a number"}
        )
        assert api.status_code == 422
    page = await services.suppressions.page(tenant.tenant_id)
    assert [(e.channel, e.address, e.source) for e in page.entries] == [
        (Channel.SMS, "+14155552671", "console")
    ]
