"""Multi-channel notifications end to end, on SQLite and PostgreSQL, through the
sandbox over real HTTP, on the injected clock: ``all`` sends on every channel at once
and skips the one the recipient cannot be reached on, and the one the tenant has no
provider (or, for SMS, no sender) for; ``first`` moves to the next
channel when the first one's job is dead-lettered; ``escalate`` stops at a success
signal in time and sends the next channel when none came, recording a late signal
without undoing anything; a restart between steps loses nothing and doubles nothing."""

from __future__ import annotations

import asyncio
from typing import Any

from homing.clock import ManualClock
from homing.sandbox.server import SandboxServer
from homing.services import Services, build
from homing.settings import Settings
from homing.store.flow_rules import Verdict
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, job, register
from tests.e2e.test_recipients import put_recipient
from tests.e2e.test_sms import register_sms
from tests.e2e.test_templates import make_template, publish
from tests.feed_helpers import bearer, feed_token
from tests.metrics_helpers import Moves, scrape

FROM = "Acme <hello@acme.example>"
PARTS: dict[str, Any] = {
    "email": {"subject": "Report {{ n }}", "text": "Report {{ n }} is ready"},
    "sms": {"body": "Report {{ n }} is ready"},
    "in_app": {"title": "Report {{ n }}", "body": "Report {{ n }} is ready"},
}


async def ready(tenant: TenantClient, sandbox: SandboxServer, **recipient: Any) -> None:
    """A template with email, SMS and in-app parts, Resend and Twilio on the sandbox,
    and the recipient ``user-1``."""
    await make_template(tenant, "report")
    await publish(tenant, "report", **PARTS)
    await register(tenant, sandbox, "resend", 1)
    await register_sms(tenant, sandbox, "twilio", 1)
    await put_recipient(tenant, "user-1", **recipient)


async def notify(tenant: TenantClient, **body: Any) -> dict[str, Any]:
    message = {"recipient": "user-1", "template": "report", "data": {"n": 7}, "from": FROM}
    response = await tenant.post("/v1/notifications", json={**message, **body})
    assert response.status_code == 202, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def shown(tenant: TenantClient, notification_id: str) -> dict[str, Any]:
    response = await tenant.get(f"/v1/notifications/{notification_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def steps(body: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(s["channel"], s["status"], s["reason"]) for s in body["steps"]]


async def read_item(tenant: TenantClient, recipient: str = "user-1") -> None:
    """The recipient reads their newest feed item, with a feed token, as a browser does."""
    token = await feed_token(tenant, recipient)
    [item, *_] = (await tenant.api.get("/feed", headers=bearer(token))).json()["data"]
    marked = await tenant.api.post(f"/feed/{item['id']}/read", headers=bearer(token))
    assert marked.status_code == 200, marked.text


async def test_all_sends_every_reachable_channel_at_once(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await ready(tenant, sandbox, email="ada@example.com")  # no phone
    before = await scrape(tenant.api)
    body = await notify(tenant, channels=["in_app", "sms", "email"], strategy="all")
    assert steps(body) == [
        ("in_app", "accepted", "accepted"),
        ("sms", "skipped", "unreachable"),
        ("email", "queued", None),
    ]
    assert body["status"] == "running"
    assert await deliver(services) == 1
    assert await services.notifications.sweep() == 1
    done = await shown(tenant, body["id"])
    assert done["status"] == "succeeded"
    assert steps(done)[2] == ("email", "accepted", "accepted")
    [email] = await sb.messages("resend")
    assert email["subject"] == "Report 7"
    assert await sb.messages("twilio") == []
    assert (await job(tenant, done["steps"][2]["job_id"]))["status"] == "COMPLETED"
    moves = Moves(before, await scrape(tenant.api))
    steps_total = "homing_notification_steps_total"
    assert moves.moved(steps_total, channel="in_app", outcome="accepted") == 1
    assert moves.moved(steps_total, channel="sms", outcome="skipped") == 1
    assert moves.moved(steps_total, channel="email", outcome="accepted") == 1
    assert moves.moved("homing_notifications_accepted_total", channel="email") == 1


async def test_a_step_on_a_channel_the_tenant_cannot_send_on_is_skipped_at_accept(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    # Email only, at first: the chat and SMS steps are skipped (neither refuses the whole
    # request nor queues a job bound for the dead letters).
    await make_template(tenant, "report")
    await publish(tenant, "report", **PARTS)
    await register(tenant, sandbox, "resend", 1)
    await put_recipient(tenant, "user-1", email="ada@example.com", phone="+14155552671")
    body = await notify(tenant, channels=["chat", "sms", "email"], strategy="all")
    assert steps(body) == [
        ("chat", "skipped", "no_provider"),
        ("sms", "skipped", "no_provider"),
        ("email", "queued", None),
    ]
    assert await deliver(services) == 1
    # An SMS provider with no sender of its own: a step, which names none, cannot go.
    twilio = {
        "channel": "sms",
        "provider": "twilio",
        "credentials": {"account_sid": "AC" + "0" * 32, "auth_token": "tw-token-secret"},
        "config": {"base_url": sandbox.provider_base_url("twilio")},
    }
    assert (await tenant.post("/v1/providers", json=twilio)).status_code == 201
    later = await notify(tenant, channels=["sms", "email"], strategy="first")
    assert steps(later) == [("sms", "skipped", "no_sender"), ("email", "queued", None)]
    assert await deliver(services) == 1
    assert await sb.messages("twilio") == []
    assert len(await sb.messages("resend")) == 2


async def test_first_moves_to_the_next_channel_when_the_first_is_dead_lettered(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await ready(tenant, sandbox, email="ada@example.com", phone="+14155552671")
    await sb.fault("twilio", status=401)  # credentials refused: the SMS job fails
    body = await notify(tenant, channels=["sms", "email"], strategy="first")
    assert steps(body) == [("sms", "queued", None), ("email", "pending", None)]
    await deliver(services)
    assert await services.notifications.sweep() == 1
    middle = await shown(tenant, body["id"])
    assert middle["steps"][0]["status"] == "failed"
    assert middle["steps"][1]["status"] == "queued"
    assert await deliver(services) == 1
    await services.notifications.sweep()
    done = await shown(tenant, body["id"])
    assert done["status"] == "succeeded"
    assert steps(done)[1] == ("email", "accepted", "accepted")
    assert len(await sb.messages("resend")) == 1


async def test_escalate_stops_at_a_success_signal_in_time(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await ready(tenant, sandbox, phone="+14155552671")
    body = await notify(
        tenant, channels=["in_app", "sms"], strategy="escalate", escalate_after_seconds=600
    )
    assert steps(body) == [("in_app", "queued", None), ("sms", "pending", None)]
    clock.advance(300)
    assert await services.notifications.sweep() == 0  # no signal yet, not due
    await read_item(tenant)
    assert await services.notifications.sweep() == 1
    clock.advance(3600)
    await services.notifications.sweep()
    done = await shown(tenant, body["id"])
    assert done["status"] == "succeeded"
    assert steps(done) == [
        ("in_app", "succeeded", "read"),
        ("sms", "not_needed", "an earlier step succeeded"),
    ]
    assert await deliver(services) == 0
    assert await sb.messages("twilio") == []


async def test_escalate_sends_the_next_channel_when_the_signal_comes_too_late(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await ready(tenant, sandbox, phone="+14155552671")
    body = await notify(
        tenant, channels=["in_app", "sms"], strategy="escalate", escalate_after_seconds=600
    )
    clock.advance(601)
    assert await services.notifications.sweep() == 1
    middle = await shown(tenant, body["id"])
    assert steps(middle) == [("in_app", "escalated", "no_signal"), ("sms", "queued", None)]
    assert await deliver(services) == 1
    await read_item(tenant)  # read after the SMS went: recorded, not undone
    await services.notifications.sweep()
    later = await shown(tenant, body["id"])
    assert later["steps"][0]["status"] == "escalated"
    assert later["steps"][0]["signal"] == "read"
    assert later["steps"][1]["status"] == "queued"  # SMS accepted, no delivery report yet
    clock.advance(601)
    await services.notifications.sweep()
    done = await shown(tenant, body["id"])
    assert done["status"] == "unconfirmed"
    assert steps(done)[1] == ("sms", "unconfirmed", "no_signal")
    assert len(await sb.messages("twilio")) == 1


async def test_a_restart_between_steps_loses_nothing_and_doubles_nothing(
    services: Services,
    settings: Settings,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await ready(tenant, sandbox, email="ada@example.com", phone="+14155552671")
    await sb.fault("twilio", status=401)
    body = await notify(tenant, channels=["sms", "email"], strategy="first")
    # The SMS job is dead-lettered, and this process goes before any sweep saw it.
    await deliver(services)
    # Two fresh processes on the same database sweep side by side, then again.
    restarted = [await build(settings, clock=clock, run_migrations=False) for _ in range(2)]
    try:
        first, second = restarted
        settled = await asyncio.gather(*(s.notifications.sweep() for s in restarted))
        assert sum(settled) == 1
        assert await second.notifications.sweep() == 0
        assert await deliver(first) == 1
        await asyncio.gather(*(s.notifications.sweep() for s in restarted))
        note = await second.notifications.get(tenant.tenant_id, body["id"])
    finally:
        for built in restarted:
            await built.aclose()
    assert note.status == "succeeded"
    assert [(s.channel, s.status) for s in note.steps] == [
        ("sms", "failed"),
        ("email", "accepted"),
    ]
    assert len(await sb.messages("resend")) == 1
    assert (await shown(tenant, body["id"]))["status"] == "succeeded"


async def test_two_processes_settling_both_steps_of_all_at_once_end_it(
    services: Services,
    settings: Settings,
    tenant: TenantClient,
    sandbox: SandboxServer,
    clock: ManualClock,
) -> None:
    await ready(tenant, sandbox, email="ada@example.com", phone="+14155552671")
    body = await notify(tenant, channels=["sms", "email"], strategy="all")
    assert await deliver(services) == 2
    restarted = [await build(settings, clock=clock, run_migrations=False) for _ in range(2)]
    try:
        accepted = Verdict("accepted", "accepted")
        await asyncio.gather(
            *(
                built.notifications.settle(body["id"], position, accepted)
                for built, position in zip(restarted, (1, 0), strict=True)
            )
        )
    finally:
        for built in restarted:
            await built.aclose()
    done = await shown(tenant, body["id"])
    assert done["status"] == "succeeded"
    assert [s["status"] for s in done["steps"]] == ["accepted", "accepted"]
