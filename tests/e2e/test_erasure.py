"""Erasure end to end, on SQLite and PostgreSQL, with real sends through the sandbox
over HTTP (docs/recipients.md, "Erasure"): after ``POST /v1/erasure`` or ``DELETE
/v1/recipients/{id}`` no search finds the address, no row of the tenant's holds it in
clear, its suppressions and refusals still hold as keyed hashes, another tenant's rows
stay, and an erasure cut short is finished by a second call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import String, Table, cast, or_, select

from homing.channels import Channel
from homing.clock import ManualClock
from homing.crypto import AddressRefs
from homing.errors import StoreError
from homing.managers.erasure import Erasure, ErasureLimits
from homing.models import Actor, ActorKind, Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from homing.store.erasure import Erase, ErasureStore, ErasureTarget
from homing.store.recipients import RecipientStore
from homing.store.tables.audit import audit_events
from homing.store.tables.core import attempts, dead_letters, jobs
from homing.store.tables.inbound import inbound_events, suppressions
from homing.store.tables.notifications import notifications
from tests.conftest import TenantClient, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.dead_letter_helpers import dead_letter
from tests.e2e.conftest import deliver, job, register, send
from tests.e2e.test_notifications import notify, ready, shown, steps
from tests.e2e.test_sms import register_sms
from tests.fixtures import settings_for

ADDRESS = "grace@example.org"  # not the console form's placeholder


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    # Small batches, so one erasure takes several and a cut-short one can be resumed.
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        provider_timeout_seconds=1,
        public_url="http://homing.test",
        erasure_batch_size=2,
    )


async def traces(services: Services, tenant_id: str, needle: str) -> list[str]:
    """The tables in which a row of the tenant's still holds ``needle`` in clear."""
    tables: tuple[Table, ...] = (
        jobs,
        dead_letters,
        attempts,
        suppressions,
        audit_events,
        inbound_events,
    )
    found: list[str] = []
    async with services.db.transaction() as conn:
        for table in tables:
            text = or_(*(cast(column, String).contains(needle) for column in table.c))
            query = select(table.c[0]).where(table.c.tenant_id == tenant_id, text)
            if (await conn.execute(query)).first() is not None:
                found.append(table.name)
    return found


async def by_recipient(tenant: TenantClient, **fields: Any) -> str:
    body = {"from": "Acme <hello@acme.example>", "subject": "Hi", "text": "Hello", **fields}
    response = await tenant.post("/v1/notifications/email", json=body)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


async def searched(tenant: TenantClient, address: str) -> list[dict[str, Any]]:
    response = await tenant.get("/v1/jobs", params={"to": address})
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


async def erase(tenant: TenantClient, address: str, channel: str = "email") -> httpx.Response:
    return await tenant.post("/v1/erasure", json={"address": address, "channel": channel})


async def test_an_erased_address_leaves_no_trace_and_stays_suppressed(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    sent = [await send(tenant, to=f"Ada <{ADDRESS}>") for _ in range(3)]
    assert await deliver(services) == 3
    added = await tenant.post(
        "/v1/suppressions", json={"address": ADDRESS, "channel": "email", "reason": "complaint"}
    )
    assert added.status_code == 201, added.text
    assert len(await searched(tenant, ADDRESS)) == 3

    response = await erase(tenant, "Grace <GRACE@Example.org>")
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["erased"]["jobs"] == 3
    assert report["erased"]["attempts"] == 3
    assert report["erased"]["audit_events"] == 1  # the suppression's, named by address
    assert report["kept_as_hash"]["suppressions"] == 1
    assert report["complete"] is True

    assert await searched(tenant, ADDRESS) == []
    assert await traces(services, tenant.tenant_id, ADDRESS) == []
    erased = await job(tenant, sent[0])
    assert erased["status"] == "COMPLETED" and len(erased["attempts"]) == 1
    assert erased["to"] == "[erased]"
    listed = await tenant.get("/v1/suppressions")
    assert [s["address"][:1] for s in listed.json()["data"]] == ["#"]

    again = await send(tenant, to=ADDRESS)
    assert (await job(tenant, again))["status"] == "SUPPRESSED"
    assert await deliver(services) == 0

    log = (await tenant.get("/v1/audit-log", params={"action": "address.erased"})).json()
    [event] = log["data"]
    assert ADDRESS not in str(event) and event["changes"]["erased"]["jobs"] == 3


async def test_an_erased_recipient_is_gone_and_its_refusals_still_hold(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    put = await tenant.put("/v1/recipients/user-1", json={"email": f"Ada <{ADDRESS}>"})
    assert put.status_code == 201, put.text
    category = {"name": "Digest", "kind": "transactional"}
    assert (await tenant.put("/v1/categories/digest", json=category)).status_code == 201
    patch = {"categories": {"digest": {"email": False}}}
    assert (await tenant.patch("/v1/recipients/user-1/preferences", json=patch)).status_code == 200
    await by_recipient(tenant, recipient="user-1")
    refused = await by_recipient(tenant, recipient="user-1", category="digest")
    assert (await job(tenant, refused))["status"] == "SUPPRESSED"
    assert await deliver(services) == 1

    response = await tenant.delete("/v1/recipients/user-1")
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["erased"]["jobs"] == 2 and report["erased"]["recipients"] == 1
    assert report["erased"]["preferences"] == 1
    assert report["kept_as_hash"]["opt_outs"] == 1
    assert (await tenant.get("/v1/recipients/user-1")).status_code == 404
    assert await searched(tenant, ADDRESS) == []
    assert await traces(services, tenant.tenant_id, ADDRESS) == []

    # The refusal holds for the address: a send to it in the category is not made.
    after = await send(tenant, to=ADDRESS, category="digest")
    assert (await job(tenant, after))["error_class"] == "preference"
    log = (await tenant.get("/v1/audit-log")).json()["data"]
    actions = [e["action"] for e in log]
    assert actions[:1] == ["recipient.erased"]
    assert {"recipient.created", "category.created", "recipient.preferences_changed"} <= set(
        actions
    )
    assert ADDRESS not in str(log)


async def test_an_erased_recipient_created_again_gets_nothing_it_refused_until_it_chooses(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, clock: ManualClock
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await register_sms(tenant, sandbox, "twilio", 2)
    person = {"email": f"Ada <{ADDRESS}>", "phone": "+14155552671"}
    assert (await tenant.put("/v1/recipients/user-2", json=person)).status_code == 201
    category = {"name": "Digest", "kind": "transactional"}
    assert (await tenant.put("/v1/categories/digest", json=category)).status_code == 201
    patch = {"categories": {"digest": {"email": False, "sms": False}}}
    assert (await tenant.patch("/v1/recipients/user-2/preferences", json=patch)).status_code == 200
    assert (await tenant.delete("/v1/recipients/user-2")).status_code == 200

    # Created again with the same addresses: it starts from the defaults (on), but the
    # refusals kept as hashes of its addresses still hold, by recipient and by address.
    assert (await tenant.put("/v1/recipients/user-2", json=person)).status_code == 201
    by_email = await by_recipient(tenant, recipient="user-2", category="digest")
    sms = {"recipient": "user-2", "body": "Hi", "category": "digest"}
    by_sms = await tenant.post("/v1/notifications/sms", json=sms)
    to_number = await tenant.post(
        "/v1/notifications/sms", json={"to": "+14155552671", "body": "Hi", "category": "digest"}
    )
    for job_id in (by_email, by_sms.json()["id"], to_number.json()["id"]):
        assert (await job(tenant, job_id))["error_class"] == "preference"

    # Its own choice, made after the refusal, is what counts for a send by recipient.
    clock.advance(1)
    patch = {"categories": {"digest": {"email": True}}}
    assert (await tenant.patch("/v1/recipients/user-2/preferences", json=patch)).status_code == 200
    chosen = await by_recipient(tenant, recipient="user-2", category="digest")
    assert await deliver(services) == 1
    assert (await job(tenant, chosen))["status"] == "COMPLETED"
    still = await send(tenant, to=ADDRESS, category="digest")  # the address alone: refused
    assert (await job(tenant, still))["error_class"] == "preference"


class _Crashing(ErasureStore):
    """An erasure store whose second batch of jobs fails, as a crash would."""

    calls = 0

    async def jobs_batch(self, target: ErasureTarget, limit: int, erase: Erase) -> dict[str, int]:
        self.calls += 1
        if self.calls == 2:
            raise StoreError("the process died here")
        return await super().jobs_batch(target, limit, erase)


async def test_an_erasure_cut_short_is_finished_by_a_second_call(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    for _ in range(5):
        await send(tenant, to=ADDRESS)
    assert await deliver(services) == 5
    crashing = Erasure(
        _Crashing(services.db, services.clock, AddressRefs.of(services.sealer)),
        RecipientStore(services.db, services.clock),
        services.audit,
        services.limiter,
        ErasureLimits(batch_size=2),
    )
    tenant_id = tenant.tenant_id
    actor = Actor(ActorKind.CLI, "t")
    with pytest.raises(StoreError):
        await crashing.erase_address(actor, tenant_id, Channel.EMAIL, ADDRESS)
    assert len(await searched(tenant, ADDRESS)) == 3  # the first batch of 2 is done

    response = await erase(tenant, ADDRESS)
    assert response.status_code == 200, response.text
    assert response.json()["erased"]["jobs"] == 3
    assert await searched(tenant, ADDRESS) == []


async def test_a_call_out_of_batches_is_incomplete_and_the_next_finishes(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    for _ in range(5):
        await send(tenant, to=ADDRESS)
    assert await deliver(services) == 5
    short = Erasure(
        ErasureStore(services.db, services.clock, AddressRefs.of(services.sealer)),
        RecipientStore(services.db, services.clock),
        services.audit,
        services.limiter,
        ErasureLimits(batch_size=2, max_batches=2),
    )
    actor = Actor(ActorKind.CLI, "t")
    first = await short.erase_address(actor, tenant.tenant_id, Channel.EMAIL, ADDRESS)
    assert first.erased["jobs"] == 4 and first.complete is False
    second = await erase(tenant, ADDRESS)
    assert second.status_code == 200, second.text
    assert second.json()["erased"]["jobs"] == 1 and second.json()["complete"] is True


async def test_another_tenants_rows_with_the_same_address_stay(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, api: httpx.AsyncClient
) -> None:
    other = await make_tenant(services, api, "globex")
    for client in (tenant, other):
        await register(client, sandbox, "resend", 1)
        await send(client, to=ADDRESS)
        body = {"address": ADDRESS, "channel": "email", "reason": "manual"}
        assert (await client.post("/v1/suppressions", json=body)).status_code == 201
    assert await deliver(services) == 2

    assert (await erase(tenant, ADDRESS)).status_code == 200
    assert await searched(tenant, ADDRESS) == []
    [kept] = await searched(other, ADDRESS)
    assert (await job(other, kept["id"]))["to"] == ADDRESS
    listed = (await other.get("/v1/suppressions")).json()["data"]
    assert [s["address"] for s in listed] == [ADDRESS]


async def test_the_console_finds_no_trace_and_its_flash_naming_the_address_is_gone(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(tenant, to=ADDRESS, subject="Your receipt")
    assert await deliver(services) == 1
    letter = await dead_letter(
        services, tenant, payload={"to": ADDRESS, "subject": "Hi"}, to=ADDRESS
    )
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}"
    async with browser(services) as client:
        csrf = await sign_in(client, "owner@acme.example")
        found = await client.get(f"{base}/messages", params={"to": ADDRESS})
        assert f"{base}/messages/{job_id}" in found.text
        # Adding a suppression leaves a flash naming the address, not shown yet.
        form = {"csrf": csrf, "channel": "email", "address": ADDRESS}
        added = await client.post(f"{base}/suppressions", data=form)
        assert added.status_code == 303, added.text

        response = await erase(tenant, ADDRESS)
        assert response.status_code == 200, response.text
        assert response.json()["erased"]["flashes"] == 1
        assert response.json()["erased"]["dead_letters"] == 1

        pages = [
            await client.get(f"{base}/messages", params={"to": ADDRESS}),
            await client.get(f"{base}/messages/{job_id}"),
            await client.get(f"{base}/suppressions"),
            await client.get(f"{base}/dead-letters"),
        ]
    assert all(page.status_code == 200 for page in pages), [p.status_code for p in pages]
    # The search page shows its own query again; no page shows the address otherwise.
    assert f"{base}/messages/{job_id}" not in pages[0].text
    assert pages[0].text.count(ADDRESS) == 1
    for page in pages[1:]:
        at = page.text.find(ADDRESS)
        assert at == -1, (str(page.url), page.text[max(0, at - 300) : at + 100])
    assert await traces(services, tenant.tenant_id, ADDRESS) == []
    shown = await tenant.get(f"/v1/dead-letters/{letter}")
    assert shown.status_code == 200 and ADDRESS not in shown.text


async def test_an_erased_address_leaves_the_recipients_holding_it_and_keeps_their_refusals(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    body = {"email": "Grace <GRACE@Example.org>", "phone": "+1 415 555 2671"}
    assert (await tenant.put("/v1/recipients/user-9", json=body)).status_code == 201
    near = {"email": f"b{ADDRESS}"}
    assert (await tenant.put("/v1/recipients/user-10", json=near)).status_code == 201
    category = {"name": "Digest", "kind": "transactional"}
    assert (await tenant.put("/v1/categories/digest", json=category)).status_code == 201
    patch = {"categories": {"digest": {"email": False}}}
    assert (await tenant.patch("/v1/recipients/user-9/preferences", json=patch)).status_code == 200

    response = await erase(tenant, ADDRESS)
    assert response.status_code == 200, response.text
    assert response.json()["erased"] == {"recipient_addresses": 1}
    assert response.json()["kept_as_hash"]["opt_outs"] == 1
    kept = (await tenant.get("/v1/recipients/user-9")).json()
    assert kept["email"] is None and kept["phone"] == "+14155552671"
    assert (await tenant.get("/v1/recipients/user-10")).json()["email"] == f"b{ADDRESS}"

    after = await send(tenant, to=ADDRESS, category="digest")
    assert (await job(tenant, after))["error_class"] == "preference"


async def test_an_erased_recipient_leaves_its_notifications_nameless_once_they_end(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, clock: ManualClock
) -> None:
    await ready(tenant, sandbox, phone="+14155552671")
    body = await notify(
        tenant, channels=["in_app", "sms"], strategy="escalate", escalate_after_seconds=600
    )
    # Running (its in-app step waits for a signal, no job queued): left until it ends,
    # but its SMS step, not made yet, is never made (its job, addressed, is dropped).
    early = await tenant.delete("/v1/recipients/user-1")
    assert early.status_code == 202, early.text
    assert early.json()["complete"] is False and early.json()["waiting_jobs"] == 0
    assert "notifications" not in early.json()["erased"]
    assert early.json()["erased"]["notification_steps"] == 1
    clock.advance(601)
    assert await services.notifications.sweep() == 1  # no step left after it: unconfirmed
    assert await deliver(services) == 0
    assert (await shown(tenant, body["id"]))["status"] == "unconfirmed"

    done = await tenant.delete("/v1/recipients/user-1")
    assert done.status_code == 200, done.text
    assert done.json()["complete"] is True and done.json()["erased"]["notifications"] == 1
    async with services.db.transaction() as conn:
        named = select(notifications.c.id).where(notifications.c.recipient == "user-1")
        assert (await conn.execute(named)).first() is None
    assert steps(await shown(tenant, body["id"])) == [
        ("in_app", "unconfirmed", "no_signal"),
        ("sms", "skipped", "erased"),
    ]


async def test_naming_an_erased_address_lifts_its_hashed_suppression_and_audits_the_hash(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    added = await tenant.post(
        "/v1/suppressions", json={"address": ADDRESS, "channel": "email", "reason": "complaint"}
    )
    assert added.status_code == 201, added.text
    assert (await erase(tenant, ADDRESS)).status_code == 200

    lifted = await tenant.delete("/v1/suppressions", params={"address": "GRACE@Example.org"})
    assert lifted.status_code == 204, lifted.text
    assert (await tenant.get("/v1/suppressions")).json()["data"] == []
    again = await tenant.delete("/v1/suppressions", params={"address": ADDRESS})
    assert again.status_code == 404
    sent = await send(tenant, to=ADDRESS)
    assert await deliver(services) == 1
    assert (await job(tenant, sent))["status"] == "COMPLETED"
    log = (await tenant.get("/v1/audit-log", params={"action": "suppression.removed"})).json()
    [event] = log["data"]
    assert event["target_id"].startswith("#") and ADDRESS not in str(event)
