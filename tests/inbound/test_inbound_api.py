"""Inbound endpoints over the API, on SQLite and PostgreSQL: verify, journal, apply once."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, update

from homing.clock import ManualClock
from homing.services import Services
from homing.store.tables.core import jobs, queue_entries
from homing.store.tables.inbound import (
    inbound_conflicts,
    inbound_events,
    provider_inbound,
    suppressions,
)
from homing.vendors.resend.parse import split as resend_split
from homing.vendors.sendgrid import verify as sendgrid_verify
from tests.conftest import TenantClient, make_tenant
from tests.inbound.conftest import (
    MAILGUN_KEY,
    RESEND_SECRET,
    connect,
    mailgun_body,
    resend_event,
    send_email,
)


async def _job(tenant: TenantClient, job_id: str) -> dict[str, Any]:
    response = await tenant.get(f"/v1/jobs/{job_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def _new_job(tenant: TenantClient, to: str = "ada@example.com") -> str:
    response = await send_email(tenant, to)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


async def _count(services: Services, table: Any) -> int:
    async with services.db.transaction() as conn:
        return int((await conn.execute(select(func.count()).select_from(table))).scalar_one())


async def test_unknown_account_or_provider_is_404_without_detail(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    for path in ("/inbound/resend/0194-unknown", "/inbound/smtp/x", "/inbound/other/x"):
        response = await api.post(path, content=b"{}")
        assert response.status_code == 404
        assert response.json()["error"] == {
            "code": "not_found",
            "message": "not found",
            "details": {},
        }
    vendor = await connect(services, tenant, "resend")
    await tenant.api.delete(
        vendor.path.replace("/inbound/resend/", "/v1/providers/") + "/inbound",
        headers=tenant.headers,
    )
    assert (await api.post(vendor.path, content=b"{}")).status_code == 404


async def test_bad_signatures_get_the_same_401(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "resend")
    body = resend_event("email.delivered", "job")
    good = vendor.sign(body)
    attempts = [
        (body + b" ", good),
        (body, {**good, "svix-signature": "v1,AAAA"}),
        (body, {}),
    ]
    answers = set()
    for content, headers in attempts:
        response = await api.post(vendor.path, content=content, headers=headers)
        assert response.status_code == 401
        answers.add(response.text)
    assert len(answers) == 1
    assert RESEND_SECRET not in answers.pop()
    assert await _count(services, inbound_events) == 0


async def test_a_body_over_the_cap_is_413_before_anything_else(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "resend")
    big = b"{" + b" " * 5000 + b"}"
    response = await api.post(vendor.path, content=big, headers=vendor.sign(big))
    assert response.status_code == 413

    async def chunks() -> Any:
        for _ in range(5):
            yield b" " * 1000

    response = await api.post(vendor.path, content=chunks())
    assert response.status_code == 413


async def test_inbound_secret_is_checked_sealed_and_masked(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "resend")
    account_id = vendor.path.rsplit("/", 1)[1]
    url = f"/v1/providers/{account_id}/inbound"
    shown = await tenant.get(url)
    assert shown.status_code == 200
    body = shown.json()
    assert body["kind"] == "signing_secret"
    assert body["path"] == vendor.path
    assert RESEND_SECRET not in shown.text and body["preview"].startswith("whsec_…")
    for wrong in ({"signing_secret": "nope-not-whsec"}, {"verification_key": "x" * 20}, {}):
        response = await tenant.api.put(url, json=wrong, headers=tenant.headers)
        assert response.status_code == 422, wrong
    sendgrid = await connect(services, tenant, "sendgrid")
    sendgrid_url = sendgrid.path.replace("/inbound/sendgrid/", "/v1/providers/") + "/inbound"
    response = await tenant.api.put(
        sendgrid_url, json={"verification_key": "bm90IGEga2V5IGF0IGFsbA=="}, headers=tenant.headers
    )
    assert response.status_code == 422
    other = await make_tenant(services, api, "other", provider=True)
    assert (await other.get(url)).status_code == 404
    async with services.db.transaction() as conn:
        stored = (await conn.execute(select(inbound_events))).all()
    assert stored == []


async def test_resend_event_signed_with_svix_is_folded_into_the_job(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "resend")
    job_id = await _new_job(tenant)
    body = resend_event("email.delivered", job_id)
    response = await api.post(vendor.path, content=body, headers=vendor.sign(body, "msg_d1"))
    assert response.status_code == 200, response.text
    assert response.json()["applied"] == 1
    job = await _job(tenant, job_id)
    assert job["delivery_status"] == "delivered"
    [event] = job["events"]
    assert event["type"] == "delivered" and event["provider"] == "resend"
    assert event["detail"] == {"event": "email.delivered"}
    assert event["occurred_at"] is not None and event["received_at"] is not None


async def test_a_replay_is_2xx_and_changes_nothing(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "resend")
    job_id = await _new_job(tenant)
    body = resend_event("email.bounced", job_id, bounce={"type": "Permanent"})
    headers = vendor.sign(body, "msg_replay")
    first = await api.post(vendor.path, content=body, headers=headers)
    again = await api.post(vendor.path, content=body, headers=vendor.sign(body, "msg_replay"))
    assert first.json()["applied"] == 1
    assert again.status_code == 200
    assert again.json() == {**first.json(), "applied": 0, "duplicates": 1}
    assert len((await _job(tenant, job_id))["events"]) == 1
    assert await _count(services, inbound_events) == 1
    assert await _count(services, suppressions) == 1


async def test_the_same_id_with_another_body_is_a_conflict_and_an_alert(
    api: httpx.AsyncClient,
    services: Services,
    tenant: TenantClient,
    caplog: pytest.LogCaptureFixture,
) -> None:
    vendor = await connect(services, tenant, "resend")
    job_id = await _new_job(tenant)
    delivered = resend_event("email.delivered", job_id)
    await api.post(vendor.path, content=delivered, headers=vendor.sign(delivered, "msg_same"))
    forged = resend_event("email.bounced", job_id, bounce={"type": "Permanent"})
    with caplog.at_level(logging.WARNING, logger="homing.inbound"):
        response = await api.post(
            vendor.path, content=forged, headers=vendor.sign(forged, "msg_same")
        )
    assert response.status_code == 200
    assert response.json()["conflicts"] == 1
    async with services.db.transaction() as conn:
        [conflict] = (await conn.execute(select(inbound_conflicts))).all()
    assert conflict.event_id == "msg_same" and conflict.original_hash != conflict.body_hash
    assert any("conflict" in r.getMessage() and r.event_id == "msg_same" for r in caplog.records)
    job = await _job(tenant, job_id)
    assert job["delivery_status"] == "delivered" and len(job["events"]) == 1
    assert await _count(services, suppressions) == 0


async def test_an_event_naming_another_tenants_job_changes_nothing(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    victim = await make_tenant(services, api, "victim", provider=True)
    victim_job = await _new_job(victim, "bob@example.com")
    vendor = await connect(services, tenant, "resend")
    body = resend_event(
        "email.bounced", victim_job, to="bob@example.com", bounce={"type": "Permanent"}
    )
    response = await api.post(vendor.path, content=body, headers=vendor.sign(body))
    assert response.json()["quarantined"] == 1
    job = await _job(victim, victim_job)
    assert job["events"] == [] and job["delivery_status"] is None
    assert await _count(services, suppressions) == 0
    async with services.db.transaction() as conn:
        entry = (await conn.execute(select(inbound_events))).one()
    assert entry.status == "quarantined" and entry.job_id is None
    assert entry.error == "no job of this tenant matches the event"


async def test_out_of_order_events_keep_the_status_forward_only(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "resend")
    job_id = await _new_job(tenant)
    sequence = [
        ("email.bounced", {"bounce": {"type": "Permanent"}}),
        ("email.delivered", {}),
        ("email.opened", {}),
    ]
    for number, (kind, extra) in enumerate(sequence):
        body = resend_event(kind, job_id, **extra)
        await api.post(vendor.path, content=body, headers=vendor.sign(body, f"msg_{number}"))
    job = await _job(tenant, job_id)
    assert job["delivery_status"] == "bounced"
    assert sorted(e["type"] for e in job["events"]) == ["bounced", "delivered", "opened"]


async def test_hard_bounce_suppresses_the_next_send_without_queue_or_quota(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "resend")
    job_id = await _new_job(tenant, "Ada <ADA@example.com>")
    body = resend_event("email.bounced", job_id, to="ADA@example.com", bounce={"type": "Permanent"})
    await api.post(vendor.path, content=body, headers=vendor.sign(body))
    listed = (await tenant.get("/v1/suppressions")).json()["data"]
    assert [(s["address"], s["reason"], s["source"]) for s in listed] == [
        ("ada@example.com", "hard_bounce", "resend")
    ]
    usage_before = await services.usage.used(tenant.tenant_id, _period(services))
    response = await send_email(tenant, "ada@example.com")
    assert response.status_code == 202
    assert response.json()["status"] == "SUPPRESSED"
    suppressed_id = response.json()["id"]
    job = await _job(tenant, suppressed_id)
    assert job["status"] == "SUPPRESSED" and job["error_class"] == "suppressed"
    async with services.db.transaction() as conn:
        entries = (
            await conn.execute(select(queue_entries).where(queue_entries.c.job_id == suppressed_id))
        ).all()
    assert entries == []
    assert await services.usage.used(tenant.tenant_id, _period(services)) == usage_before


def _period(services: Services) -> str:
    from homing.managers.plans import month_of

    return month_of(services.clock.now())


async def test_a_soft_bounce_is_recorded_but_does_not_suppress(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "resend")
    job_id = await _new_job(tenant)
    body = resend_event("email.bounced", job_id, bounce={"type": "Transient"})
    await api.post(vendor.path, content=body, headers=vendor.sign(body))
    job = await _job(tenant, job_id)
    assert job["delivery_status"] == "deferred"
    assert await _count(services, suppressions) == 0
    assert (await send_email(tenant)).json()["status"] == "PENDING"


async def test_a_complaint_suppresses(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "postmark")
    job_id = await _new_job(tenant)
    body = json.dumps(
        {
            "RecordType": "SpamComplaint",
            "ID": 7,
            "Type": "SpamComplaint",
            "Email": "ada@example.com",
            "BouncedAt": "2026-05-01T10:00:00Z",
            "MessageID": "pm-1",
            "Metadata": {"hjid": job_id},
        }
    ).encode()
    response = await api.post(vendor.path, content=body, headers=vendor.sign(body))
    assert response.json()["applied"] == 1
    [entry] = (await tenant.get("/v1/suppressions")).json()["data"]
    assert entry["reason"] == "complaint"


async def test_postmark_wrong_password_is_refused(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "postmark")
    body = b'{"RecordType": "Delivery"}'
    wrong = {"Authorization": "Basic aG9va3M6d3JvbmctcGFzcw=="}  # hooks:wrong-pass
    assert (await api.post(vendor.path, content=body, headers=wrong)).status_code == 401
    assert (await api.post(vendor.path, content=body, headers=vendor.sign(body))).status_code == 200


async def test_mailgun_event_maps_by_message_id_when_hjid_is_missing(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "mailgun")
    job_id = await _new_job(tenant)
    async with services.db.transaction() as conn:
        await conn.execute(
            update(jobs).where(jobs.c.id == job_id).values(provider_message_id="<m1@mg.example>")
        )
    event = {
        "event": "delivered",
        "id": "ev1",
        "timestamp": services.clock.now(),
        "recipient": "ada@example.com",
        "message": {"headers": {"message-id": "m1@mg.example"}},
    }
    response = await api.post(vendor.path, content=mailgun_body(event))
    assert response.json()["applied"] == 1
    assert (await _job(tenant, job_id))["delivery_status"] == "delivered"
    forged = await api.post(vendor.path, content=mailgun_body(event, key=MAILGUN_KEY + "x"))
    assert forged.status_code == 401


async def test_sendgrid_batch_is_verified_and_each_event_applied_once(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "sendgrid")
    job_id = await _new_job(tenant)
    events = [
        {"event": "processed", "sg_event_id": "s1", "hjid": job_id, "timestamp": 1},
        {"event": "delivered", "sg_event_id": "s2", "hjid": job_id, "timestamp": 2},
        {"event": "open", "sg_event_id": "s3", "hjid": job_id, "timestamp": 3},
    ]
    body = json.dumps(events).encode()
    first = await api.post(vendor.path, content=body, headers=vendor.sign(body))
    assert first.json()["applied"] == 3
    again = await api.post(vendor.path, content=body, headers=vendor.sign(body))
    assert again.json()["duplicates"] == 3
    job = await _job(tenant, job_id)
    assert [e["type"] for e in job["events"]] == ["info", "delivered", "opened"]
    assert job["delivery_status"] == "opened"
    tampered = body.replace(b"open", b"click")
    assert (
        await api.post(vendor.path, content=tampered, headers=vendor.sign(body))
    ).status_code == 401


@pytest.mark.parametrize(
    ("sent_as", "sg_message_id"),
    [
        # SendGrid's own example event: a legacy X-Message-Id holds dots
        # (twilio.com/docs/sendgrid/for-developers/tracking-events/event).
        ("14c5d75ce93.dfd.64b469", "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0"),
        ("W7pX2kYTQ3a8", "W7pX2kYTQ3a8.recvd-7b9c4d8f6-x2k9p-1-6650A1B2-3.0"),
        ("W7pX2kYTQ3a8", "W7pX2kYTQ3a8.filterdrecv-5645d9c87f-6r2ch-1-62E1.0"),
    ],
)
async def test_sendgrid_event_maps_by_message_id_when_hjid_is_missing(
    api: httpx.AsyncClient,
    services: Services,
    tenant: TenantClient,
    sent_as: str,
    sg_message_id: str,
) -> None:
    vendor = await connect(services, tenant, "sendgrid")
    job_id = await _new_job(tenant)
    async with services.db.transaction() as conn:
        await conn.execute(
            update(jobs).where(jobs.c.id == job_id).values(provider_message_id=sent_as)
        )
    event = {"event": "delivered", "sg_event_id": "d1", "sg_message_id": sg_message_id}
    body = json.dumps([{**event, "email": "ada@example.com", "timestamp": 1}]).encode()
    response = await api.post(vendor.path, content=body, headers=vendor.sign(body))
    assert (response.json()["applied"], response.json()["quarantined"]) == (1, 0)
    assert (await _job(tenant, job_id))["delivery_status"] == "delivered"


async def test_quarantined_events_are_reprocessed_once_they_map(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "resend")
    job_id = await _new_job(tenant)
    body = json.dumps(
        {"type": "email.delivered", "created_at": "2026-05-01T10:00:00Z",
         "data": {"email_id": "late-id", "to": ["ada@example.com"]}}
    ).encode()  # fmt: skip
    response = await api.post(vendor.path, content=body, headers=vendor.sign(body))
    assert response.json()["quarantined"] == 1
    unreadable = b"not json at all"
    response = await api.post(
        vendor.path, content=unreadable, headers=vendor.sign(unreadable, "m2")
    )
    assert response.json()["quarantined"] == 1
    async with services.db.transaction() as conn:
        await conn.execute(
            update(jobs).where(jobs.c.id == job_id).values(provider_message_id="late-id")
        )
    summary = await services.inbound.receiver.reprocess()
    assert (summary.applied, summary.quarantined) == (1, 1)
    assert (await _job(tenant, job_id))["delivery_status"] == "delivered"
    assert (await services.inbound.receiver.reprocess()).received == 1


async def test_deleting_a_provider_wipes_its_inbound_secret(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "resend")
    account_id = vendor.path.rsplit("/", 1)[1]
    intruder = await make_tenant(services, api, "intruder", provider=True)
    assert (await intruder.delete(f"/v1/providers/{account_id}")).status_code == 404
    body = resend_event("email.delivered", "job")
    assert (await api.post(vendor.path, content=body, headers=vendor.sign(body))).status_code == 200
    assert (await tenant.delete(f"/v1/providers/{account_id}")).status_code == 204
    assert (await api.post(vendor.path, content=body, headers=vendor.sign(body))).status_code == 404
    assert await _count(services, provider_inbound) == 0


async def test_a_repeat_of_an_event_never_settled_completes_it(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "resend")
    job_id = await _new_job(tenant)
    body = resend_event("email.delivered", job_id)
    [raw] = resend_split(body, {"svix-id": "msg_crash"})
    account_id = vendor.path.rsplit("/", 1)[1]
    # Stored, then the process stopped before applying it.
    await services.inbound.journal.journal("resend", account_id, tenant.tenant_id, raw)
    response = await api.post(vendor.path, content=body, headers=vendor.sign(body, "msg_crash"))
    assert response.json()["duplicates"] == 1
    assert (await _job(tenant, job_id))["delivery_status"] == "delivered"
    again = await api.post(vendor.path, content=body, headers=vendor.sign(body, "msg_crash"))
    assert again.json()["duplicates"] == 1
    assert len((await _job(tenant, job_id))["events"]) == 1


async def test_sendgrid_timestamps_are_taken_for_its_day_of_retries_and_not_ahead(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    vendor = await connect(services, tenant, "sendgrid")
    body = b'[{"event": "processed", "sg_event_id": "x"}]'
    # Stamped by the test's clock: the real time has moved on since the clock started.
    headers = vendor.sign(body, at=clock.now())
    clock.advance(sendgrid_verify.MAX_AGE_SECONDS + 1)
    assert (await api.post(vendor.path, content=body, headers=headers)).status_code == 401
    clock.advance(-sendgrid_verify.MAX_AGE_SECONDS - 1 - 301)
    assert (await api.post(vendor.path, content=body, headers=headers)).status_code == 401
    # SendGrid's retry a day later carries the first attempt's signature: taken, once.
    clock.advance(301 + 24 * 3600)
    assert (await api.post(vendor.path, content=body, headers=headers)).status_code == 200
    again = await api.post(vendor.path, content=body, headers=headers)
    assert again.json()["duplicates"] == 1


@pytest.mark.sql("erasure's statements over the event tables")
async def test_an_erased_address_leaves_no_trace_in_its_events_or_their_conflicts(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    address = "grace@example.org"
    vendor = await connect(services, tenant, "resend")
    # An event naming no job of the tenant (kept, quarantined), then its id again with
    # another body: both hold the address in their bodies.
    first = resend_event("email.delivered", "no-such-job", to=address)
    await api.post(vendor.path, content=first, headers=vendor.sign(first, "msg_grace"))
    again = resend_event("email.bounced", "no-such-job", to=address, bounce={"type": "x"})
    response = await api.post(vendor.path, content=again, headers=vendor.sign(again, "msg_grace"))
    assert response.json()["conflicts"] == 1

    erased = await tenant.post("/v1/erasure", json={"address": address, "channel": "email"})
    assert erased.status_code == 200, erased.text
    assert erased.json()["erased"]["inbound_events"] == 1
    async with services.db.transaction() as conn:
        for table in (inbound_events, inbound_conflicts):
            [row] = (await conn.execute(select(table))).all()
            assert address not in str(tuple(row)), table.name
