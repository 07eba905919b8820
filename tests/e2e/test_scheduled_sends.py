"""Scheduled sends end to end, on SQLite and PostgreSQL, through the sandbox over real
HTTP, on an injected clock: a job with ``send_at`` is not claimed a second before its
time and is sent at it; its ttl counts from it; ``PATCH /v1/jobs/{id}`` moves it while
no worker has it; quiet hours hold a send by recipient until the window ends in the
recipient's zone; the recipient's locale picks the template's (docs/scheduling.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import delete, select

from homing.clock import ManualClock
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import queue_entries
from tests.chat_helpers import register_telegram
from tests.conftest import TenantClient, stored_provider
from tests.e2e.conftest import SLACK_PATH, Sandbox, deliver, job, register, send
from tests.e2e.test_recipients import email_by_recipient, put_category, put_recipient
from tests.e2e.test_sms import register_sms
from tests.e2e.test_templates import make_template, publish
from tests.fixtures import settings_for

PARIS = ZoneInfo("Europe/Paris")


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
        public_url="http://homing.test",
    )


def rfc3339(epoch: float, tz: tzinfo = PARIS) -> str:
    """``epoch`` as RFC 3339 with the zone's offset (not UTC: the offset must count)."""
    return datetime.fromtimestamp(epoch, tz).isoformat()


def moment(value: str | None) -> float:
    assert value is not None
    return datetime.fromisoformat(value).timestamp()


async def test_a_scheduled_email_is_sent_at_its_time_and_not_a_second_before(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    due = int(clock.now()) + 3600
    job_id = await send(tenant, send_at=rfc3339(due))
    shown = await job(tenant, job_id)
    assert (shown["status"], shown["schedule_reason"]) == ("PENDING", "requested")
    assert moment(shown["send_at"]) == due
    listed = (await tenant.get("/v1/jobs")).json()["data"]
    assert [(j["id"], moment(j["send_at"])) for j in listed] == [(job_id, due)]
    assert await deliver(services) == 0
    clock.advance(due - clock.now() - 1)
    assert await deliver(services) == 0
    assert await sb.messages("resend") == []
    clock.advance(1)
    assert await deliver(services) == 1
    assert (await job(tenant, job_id))["status"] == "COMPLETED"
    assert len(await sb.messages("resend")) == 1


async def test_a_send_at_already_past_sends_now(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, clock: ManualClock
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(tenant, send_at=rfc3339(clock.now() - 86_400))
    assert moment((await job(tenant, job_id))["send_at"]) == pytest.approx(clock.now())
    assert await deliver(services) == 1


async def test_send_at_past_thirty_days_or_without_an_offset_is_refused(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await stored_provider(services, tenant.tenant_id)  # accepted, never delivered
    base = {"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"}
    far = await tenant.post(
        "/v1/notifications/email", json={**base, "send_at": rfc3339(clock.now() + 31 * 86_400)}
    )
    assert far.status_code == 422, far.text
    assert far.json()["error"]["code"] == "send_at_too_far"
    naive = await tenant.post(
        "/v1/notifications/email", json={**base, "send_at": "2030-01-01T09:00:00"}
    )
    assert naive.status_code == 422
    assert naive.json()["error"]["code"] == "validation_error"


async def test_a_scheduled_jobs_ttl_counts_from_its_send_at(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, clock: ManualClock
) -> None:
    await register(tenant, sandbox, "resend", 1)
    due = int(clock.now()) + 7200
    job_id = await send(tenant, send_at=rfc3339(due), ttl_seconds=60)
    assert moment((await job(tenant, job_id))["expires_at"]) == due + 60
    clock.advance(due - clock.now() + 30)
    assert await deliver(services) == 1
    assert (await job(tenant, job_id))["status"] == "COMPLETED"


async def test_an_idempotent_repeat_must_name_the_same_send_at(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await stored_provider(services, tenant.tenant_id)  # accepted, never delivered
    body = {"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"}
    key = {"Idempotency-Key": "k-1"}
    due = int(clock.now()) + 600
    first = await tenant.post(
        "/v1/notifications/email", json={**body, "send_at": rfc3339(due)}, headers=key
    )
    assert first.status_code == 202
    # The same moment in another offset is the same request.
    again = await tenant.post(
        "/v1/notifications/email", json={**body, "send_at": rfc3339(due, UTC)}, headers=key
    )
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json()["id"] == first.json()["id"]
    other = await tenant.post(
        "/v1/notifications/email", json={**body, "send_at": rfc3339(due + 1)}, headers=key
    )
    assert other.json()["error"]["code"] == "idempotency_conflict"
    unscheduled = await tenant.post("/v1/notifications/email", json=body, headers=key)
    assert unscheduled.json()["error"]["code"] == "idempotency_conflict"


async def test_patch_moves_a_waiting_job_and_its_expiry(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    start = int(clock.now())
    job_id = await send(tenant, send_at=rfc3339(start + 600), ttl_seconds=120)
    moved = await tenant.patch(f"/v1/jobs/{job_id}", json={"send_at": rfc3339(start + 1200)})
    assert moved.status_code == 200, moved.text
    assert moment(moved.json()["send_at"]) == start + 1200
    shown = await job(tenant, job_id)
    assert moment(shown["expires_at"]) == start + 1320
    clock.advance(600)
    assert await deliver(services) == 0
    # Earlier again: due at once.
    sooner = await tenant.patch(f"/v1/jobs/{job_id}", json={"send_at": rfc3339(start)})
    assert sooner.status_code == 200, sooner.text
    assert await deliver(services) == 1
    done = await tenant.patch(f"/v1/jobs/{job_id}", json={"send_at": rfc3339(start + 900)})
    assert done.status_code == 409
    assert done.json()["error"]["code"] == "not_reschedulable"
    far = await tenant.patch(
        f"/v1/jobs/{job_id}", json={"send_at": rfc3339(clock.now() + 40 * 86_400)}
    )
    assert far.json()["error"]["code"] == "send_at_too_far"


async def test_a_cancelled_scheduled_job_is_never_sent(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, clock: ManualClock
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(tenant, send_at=rfc3339(clock.now() + 60))
    cancelled = await tenant.post(f"/v1/jobs/{job_id}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    clock.advance(61)
    assert await deliver(services) == 0
    moved = await tenant.patch(f"/v1/jobs/{job_id}", json={"send_at": rfc3339(clock.now())})
    assert moved.json()["error"]["code"] == "not_reschedulable"


async def test_sms_chat_webhook_and_batch_items_wait_for_their_send_at(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await register_sms(tenant, sandbox, "twilio", 1)
    await register_telegram(tenant, sandbox)
    due = rfc3339(int(clock.now()) + 300)
    sent: list[Any] = [
        await tenant.post(
            "/v1/notifications/sms", json={"to": "+14155552671", "body": "Hi", "send_at": due}
        ),
        await tenant.post(
            "/v1/notifications/chat", json={"to": "4242", "text": "Hi", "send_at": due}
        ),
        await tenant.post(
            "/v1/notifications/webhook",
            json={"url": "https://hooks.example.com/x", "payload": {"a": 1}, "send_at": due},
        ),
    ]
    assert [r.status_code for r in sent] == [202, 202, 202], [r.text for r in sent]
    message = {"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"}
    batch = await tenant.post(
        "/v1/notifications/email/batch",
        json={"messages": [{**message, "send_at": due}, message]},
    )
    assert batch.status_code == 202, batch.text
    ids = [r.json()["id"] for r in sent] + [r["id"] for r in batch.json()["results"]]
    shown = [await job(tenant, i) for i in ids]
    assert [s["schedule_reason"] for s in shown] == ["requested"] * 4 + [None]
    assert await deliver(services) == 1  # the batch's unscheduled email
    clock.advance(300)
    assert await deliver(services) >= 3  # the webhook's host is refused, which counts too
    assert {(await job(tenant, i))["status"] for i in ids[:2] + ids[3:]} == {"COMPLETED"}


async def test_a_batch_item_too_far_ahead_is_refused_alone(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await stored_provider(services, tenant.tenant_id)  # accepted, never delivered
    message = {"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"}
    far = rfc3339(clock.now() + 60 * 86_400)
    batch = await tenant.post(
        "/v1/notifications/email/batch",
        json={"messages": [message, {**message, "send_at": far}, message]},
    )
    assert batch.status_code == 202, batch.text
    results = batch.json()["results"]
    assert [r.get("error", {}).get("code") for r in results] == [None, "send_at_too_far", None]
    assert batch.json()["accepted"] == 2


def _advance_to_local(clock: ManualClock, hour: int, tz: ZoneInfo = PARIS) -> datetime:
    """Move the clock forward to the next ``hour``:00 in ``tz``; that moment."""
    now = datetime.fromtimestamp(clock.now(), tz)
    target = (now + timedelta(days=1)).replace(hour=hour, minute=0, second=0, microsecond=0)
    target = datetime.fromtimestamp(target.timestamp(), tz)  # resolved through any DST gap
    clock.advance(target.timestamp() - clock.now())
    return target


async def test_quiet_hours_hold_a_send_until_the_window_ends_in_the_recipients_zone(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await put_category(tenant, "news", quiet_hours={"start": "21:00", "end": "08:00"})
    await put_recipient(tenant, "paris", email="ann@example.com", timezone="Europe/Paris")
    await put_recipient(tenant, "nowhere", email="bo@example.com")
    night = _advance_to_local(clock, 23)
    held = await email_by_recipient(tenant, recipient="paris", category="news")
    urgent = await email_by_recipient(
        tenant, recipient="paris", category="news", priority="CRITICAL"
    )
    zoneless = await email_by_recipient(tenant, recipient="nowhere", category="news")
    shown = await job(tenant, held.json()["id"])
    morning = (night + timedelta(hours=9)).replace(hour=8)
    assert shown["schedule_reason"] == "quiet_hours"
    assert moment(shown["send_at"]) == morning.timestamp()
    assert (await job(tenant, urgent.json()["id"]))["send_at"] is None
    assert (await job(tenant, zoneless.json()["id"]))["send_at"] is None
    assert await deliver(services) == 2
    clock.advance(morning.timestamp() - clock.now() - 1)
    assert await deliver(services) == 0
    clock.advance(1)
    assert await deliver(services) == 1
    assert (await job(tenant, held.json()["id"]))["status"] == "COMPLETED"


async def test_the_tenants_default_quiet_hours_apply_to_a_category_without_any(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await stored_provider(services, tenant.tenant_id)  # accepted, never delivered
    changed = await tenant.patch(
        "/v1/settings", json={"quiet_hours": {"start": "22:00", "end": "07:30"}}
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["quiet_hours"] == {"start": "22:00", "end": "07:30"}
    await put_category(tenant, "plain")
    await put_recipient(tenant, "paris", email="ann@example.com", timezone="Europe/Paris")
    night = _advance_to_local(clock, 23)
    held = await email_by_recipient(tenant, recipient="paris", category="plain")
    shown = await job(tenant, held.json()["id"])
    assert shown["schedule_reason"] == "quiet_hours"
    assert (
        moment(shown["send_at"])
        == (night + timedelta(hours=8)).replace(hour=7, minute=30).timestamp()
    )
    cleared = await tenant.patch("/v1/settings", json={"quiet_hours": None})
    assert cleared.json()["quiet_hours"] is None


async def test_a_scheduled_send_in_quiet_hours_waits_for_the_window_to_end(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await stored_provider(services, tenant.tenant_id)  # accepted, never delivered
    await put_category(tenant, "news", quiet_hours={"start": "21:00", "end": "08:00"})
    await put_recipient(tenant, "paris", email="ann@example.com", timezone="Europe/Paris")
    noon = _advance_to_local(clock, 12)
    asked = (noon + timedelta(hours=10)).timestamp()  # 22:00, in the window
    held = await email_by_recipient(
        tenant, recipient="paris", category="news", send_at=rfc3339(asked)
    )
    shown = await job(tenant, held.json()["id"])
    assert shown["schedule_reason"] == "quiet_hours"
    next_morning = (noon + timedelta(days=1)).replace(hour=8)
    assert moment(shown["send_at"]) == next_morning.timestamp()


async def test_the_recipients_locale_picks_the_templates_locale(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await make_template(tenant)
    await publish(tenant, "welcome", email={"subject": "Hello", "text": "en"})
    await publish(tenant, "welcome", locale="fr", email={"subject": "Bonjour", "text": "fr"})
    await put_recipient(tenant, "claire", email="claire@example.com", locale="fr-CA")
    await put_recipient(tenant, "ann", email="ann@example.com")

    async def templated(**fields: Any) -> Any:
        body = {"from": "hello@acme.example", "template": "welcome", "data": {}, **fields}
        return await tenant.post("/v1/notifications/email", json=body)

    sent = {who: await templated(recipient=who) for who in ("claire", "ann")}
    own = await templated(recipient="claire", locale="en")
    assert [r.status_code for r in (*sent.values(), own)] == [202, 202, 202]
    for response, used in ((sent["claire"], "fr"), (sent["ann"], "en"), (own, "en")):
        assert (await job(tenant, response.json()["id"]))["template"]["locale"] == used


async def test_a_lost_entry_is_mended_at_the_jobs_send_at(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await stored_provider(services, tenant.tenant_id)  # accepted, never delivered
    due = int(clock.now()) + 3600
    job_id = await send(tenant, send_at=rfc3339(due))
    async with services.db.transaction() as conn:
        await conn.execute(delete(queue_entries).where(queue_entries.c.job_id == job_id))
    report = await services.reconciler().run()
    assert (report.missing_entry, report.mended) == (1, 1)
    async with services.db.transaction() as conn:
        available = await conn.scalar(
            select(queue_entries.c.available_at).where(queue_entries.c.job_id == job_id)
        )
    assert available == due
    assert await deliver(services) == 0
