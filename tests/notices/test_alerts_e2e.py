"""Alerts on missing signals end to end: the check rounds' evaluation fires each
condition once to Slack (the sandbox's stand-in) and to the operator's email (platform
email through the sandbox), and says "resolved" once when it clears; on both databases."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import insert

from homing.clock import ManualClock, as_datetime
from homing.models import new_id
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.store.tables.inbound import inbound_events
from tests.conftest import TenantClient, deliver, disable_providers, stored_provider
from tests.e2e.conftest import register, send
from tests.fixtures import Sandbox
from tests.notices.conftest import OPERATOR

A_DAY = 86_400.0


async def _evaluate(services: Services, clock: ManualClock) -> None:
    """One evaluation with the turn free (the lease runs out within an interval)."""
    clock.advance(services.settings.alerts.interval_seconds)
    assert await services.check_rounds().run()
    await services.alerter.flush()


async def _slack_texts(sb: Sandbox) -> list[str]:
    return [post["payload"]["text"] for post in await sb.slack()]


async def test_a_queue_not_draining_fires_once_emails_the_operator_and_resolves(
    services: Services,
    tenant: TenantClient,
    platform: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await send(tenant)
    clock.advance(services.settings.alerts.queue_stuck_seconds + 1)
    await _evaluate(services, clock)
    await _evaluate(services, clock)  # still failing: not sent again
    [fired] = await _slack_texts(sb)
    assert "queue_not_draining:notifications-email" in fired
    assert "no_worker_progress" in fired

    await deliver(services)  # the tenant's job, and the alert email first (CRITICAL)
    [mail] = [m for m in await sb.messages("sendgrid") if m["to"] == [OPERATOR]]
    assert "firing" in mail["subject"] and "queue_not_draining" in mail["text"]

    await _evaluate(services, clock)
    resolved = (await _slack_texts(sb))[1]
    assert "resolved (2)" in resolved and "queue_not_draining:notifications-email" in resolved
    await _evaluate(services, clock)
    assert len(await sb.slack()) == 2


async def test_a_failing_provider_fires_by_its_failure_ratio_and_resolves(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=503)
    for _ in range(4):
        await send(tenant)
    await deliver(services)
    await _evaluate(services, clock)
    [fired] = await _slack_texts(sb)
    assert "provider_failing:resend: 4 of 4 calls failed" in fired
    assert tenant.tenant_id not in fired

    await sb.http.delete("/_sandbox/faults")
    clock.advance(services.settings.alerts.window_seconds)
    await deliver(services)  # the retries succeed
    await _evaluate(services, clock)
    resolved = (await _slack_texts(sb))[1]
    assert "resolved" in resolved and "provider_failing:resend" in resolved


async def test_a_dead_letter_spike_fires(
    services: Services, tenant: TenantClient, sb: Sandbox, clock: ManualClock
) -> None:
    await stored_provider(services, tenant.tenant_id)
    for _ in range(3):
        await send(tenant)
    await disable_providers(services, tenant.tenant_id)
    await deliver(services)  # their provider gone since: each is dead-lettered at once
    await _evaluate(services, clock)
    texts = await _slack_texts(sb)
    assert any("dead_letter_spike: 3 jobs dead-lettered" in t for t in texts)


async def _journal(services: Services, *, lag: float, status: str, count: int) -> None:
    now = as_datetime(services.clock.now())
    rows = [
        {
            "id": new_id(),
            "source": "resend",
            "provider_account_id": "pa_1",
            "event_id": new_id(),
            "body_hash": "0" * 64,
            "status": status,
            "occurred_at": now - timedelta(seconds=lag),
            "received_at": now,
        }
        for _ in range(count)
    ]
    async with services.db.transaction() as conn:
        await conn.execute(insert(inbound_events), rows)


async def test_inbound_lag_and_quarantine_fire_on_their_thresholds(
    services: Services, sb: Sandbox, clock: ManualClock
) -> None:
    await _journal(services, lag=5, status="applied", count=18)
    await _journal(services, lag=5, status="quarantined", count=2)
    clock.advance(services.settings.alerts.interval_seconds)
    await _journal(services, lag=3600, status="applied", count=1)  # 1 of 21: not p95
    assert await services.check_rounds().run()
    await services.alerter.flush()
    [fired] = await _slack_texts(sb)
    assert "inbound_quarantine: 2 of 21 events quarantined" in fired
    assert "inbound_lag" not in fired

    await _journal(services, lag=3600, status="applied", count=10)
    await _evaluate(services, clock)
    assert "inbound_lag" in (await _slack_texts(sb))[1]


@pytest.mark.sql("concurrent evaluations against the firing row's unique key")
async def test_two_evaluations_at_once_fire_each_alert_once(
    services: Services, tenant: TenantClient, sb: Sandbox, clock: ManualClock
) -> None:
    await stored_provider(services, tenant.tenant_id)
    for _ in range(3):
        await send(tenant)
    await disable_providers(services, tenant.tenant_id)
    await deliver(services)  # their provider gone since: each is dead-lettered at once
    keepers = [services.check_rounds() for _ in range(3)]
    checks = [k._alerts.run() for k in keepers]
    results = await asyncio.gather(*checks)
    assert sorted(len(fired) for fired, _ in results) == [0, 0, 1]
    await services.alerter.flush()
    assert sum("dead_letter_spike" in t for t in await _slack_texts(sb)) == 1
