"""Multi-channel notifications and provider events, on SQLite and PostgreSQL: Twilio's
signed callbacks from the sandbox to a real Homing over HTTP are an escalating SMS
step's signals. ``delivered`` in time stops the chain; ``undelivered`` escalates at
once, long before the window ends."""

from __future__ import annotations

from typing import Any

from homing.clock import ManualClock
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, register
from tests.e2e.test_notifications import PARTS, notify, shown, steps
from tests.e2e.test_recipients import put_recipient
from tests.e2e.test_sms_events import _connect, _event
from tests.e2e.test_templates import make_template, publish


async def _sms_then_email(
    tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> tuple[dict[str, Any], str]:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    await register(tenant, sandbox, "resend", 1)
    await make_template(tenant, "report")
    await publish(tenant, "report", **PARTS)
    await put_recipient(tenant, "user-1", email="ada@example.com", phone="+14155552671")
    body = await notify(
        tenant, channels=["sms", "email"], strategy="escalate", escalate_after_seconds=900
    )
    return body, url


async def test_a_delivered_callback_in_time_stops_the_chain(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    homing_url: str,
    clock: ManualClock,
) -> None:
    body, url = await _sms_then_email(tenant, sandbox, sb, homing_url)
    assert await deliver(services) == 1
    assert await services.notifications.sweep() == 0  # accepted, no signal yet
    await _event(sb, "delivered", url)
    assert await services.notifications.sweep() == 1
    clock.advance(3600)
    await services.notifications.sweep()
    done = await shown(tenant, body["id"])
    assert done["status"] == "succeeded"
    assert steps(done) == [
        ("sms", "succeeded", "delivered"),
        ("email", "not_needed", "an earlier step succeeded"),
    ]
    assert await sb.messages("resend") == []


async def test_an_undelivered_callback_escalates_at_once(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    homing_url: str,
) -> None:
    body, url = await _sms_then_email(tenant, sandbox, sb, homing_url)
    assert await deliver(services) == 1
    await _event(sb, "undelivered", url)
    assert await services.notifications.sweep() == 1  # no clock moved: the window is open
    middle = await shown(tenant, body["id"])
    assert middle["steps"][0]["status"] == "failed"
    assert middle["steps"][1]["status"] == "queued"
    assert await deliver(services) == 1
    assert len(await sb.messages("resend")) == 1
