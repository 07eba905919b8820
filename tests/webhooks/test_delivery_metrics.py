"""Webhook deliveries in /metrics: delivered, a failure class, gone — over real HTTP to
a receiver on 127.0.0.1, on SQLite and PostgreSQL."""

from __future__ import annotations

import httpx

from homing.clock import ManualClock
from homing.services import Services
from tests.conftest import TenantClient
from tests.metrics_helpers import Moves, scrape
from tests.webhooks.conftest import deliver, send_webhook
from tests.webhooks.receiver import Receiver, Reply

WEBHOOK = {"channel": "webhook", "provider": "webhook"}


async def test_webhook_deliveries_are_counted_by_outcome(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    receiver: Receiver,
    clock: ManualClock,
) -> None:
    receiver.reply(Reply(status=500), Reply(status=200), Reply(status=410))
    before = await scrape(api)
    await send_webhook(tenant, f"{receiver.url}/hooks/a")
    assert await deliver(services) == 1
    clock.advance(3600)
    assert await deliver(services) == 1
    await send_webhook(tenant, f"{receiver.url}/hooks/b")
    assert await deliver(services) == 1
    moves = Moves(before, await scrape(api))
    deliveries = "homing_webhook_deliveries_total"
    assert moves.moved(deliveries, outcome="transient") == 1
    assert moves.moved(deliveries, outcome="delivered") == 1
    assert moves.moved(deliveries, outcome="gone") == 1
    assert moves.moved("homing_notifications_accepted_total", channel="webhook") == 2
    assert moves.moved("homing_provider_calls_total", **WEBHOOK, outcome="success") == 1
    assert moves.moved("homing_jobs_finished_total", channel="webhook", status="completed") == 1
    assert moves.moved("homing_jobs_finished_total", channel="webhook", status="failed") == 1
