"""A hostile tenant cannot grow the metrics' label cardinality, nor read anything of
itself or others in a scrape: 1,000 requests with distinct bogus providers, addresses,
channels and reasons add at most a fixed handful of series, every label value is from
its fixed set, and no tenant id, key, address or provider secret appears in the text."""

from __future__ import annotations

import httpx

from homing.channels import Channel
from homing.managers.tenancy import MAX_RATE_PER_MINUTE
from homing.models import FailureClass, Plan, Priority, Queue
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.store.flow_rules import OUTCOMES as STEP_OUTCOMES
from tests.conftest import make_tenant
from tests.e2e.conftest import register
from tests.metrics_helpers import Moves, homing_series, scrape

ROUNDS = 250  # x 4 kinds of hostile request = 1,000
RATE = MAX_RATE_PER_MINUTE  # past it the rest are refused as rate_limited: bounded too
SECRET = "re_live_cardinality_Secret_42"

# Every value a label may take (docs/operations.md, "Metrics"); "other" is the bound of each.
ALLOWED: dict[str, set[str]] = {
    "channel": {c.value for c in Channel} | {"other"},
    "queue": {q.value for q in Queue},
    "priority": {p.name.lower() for p in Priority},
    "outcome": {c.value for c in FailureClass}
    | {"success", "delivered", "gone"}
    | {"stored", "suppressed"}  # homing_feed_items_total
    | set(STEP_OUTCOMES),  # homing_notification_steps_total
    "status": {"completed", "failed", "suppressed", "cancelled"},
    "by": {"poll", "stream"},  # homing_feed_reads_total
    "provider": {
        *("sendgrid", "resend", "postmark", "mailgun", "smtp", "webhook"),
        *("twilio", "vonage", "telegram", "slack"),
        "other",
    },
    "reason": {
        "suppressed",
        "quota",
        "rate_limited",
        "suspended",
        "unauthenticated",
        "conflict",
        "invalid",
        "unavailable",
        "other",
    },
    "result": {
        *("applied", "ignored", "duplicate", "conflict", "quarantined", "refused"),
        *("unverified", "other"),
        *("sent", "held"),  # homing_notices_total (duplicate is above)
    },
    "alert": {
        *("queue_not_draining", "no_worker_progress", "provider_failing", "inbound_lag"),
        *("inbound_quarantine", "dead_letter_spike", "reconciler"),
    },
    "state": {"fired", "resolved"},
    "error_class": {c.value for c in FailureClass}
    | {"call_limit", "expired", "no_provider", "worker_lost", "other"},
}
# Labels the library adds (histogram buckets) or other parts own (rate limiter, purge).
FOREIGN = {"le", "policy", "kind", "worker_lost"}


async def test_a_thousand_hostile_requests_add_a_bounded_number_of_series(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer
) -> None:
    hostile = await make_tenant(services, api, "hostile", Plan.STARTUP, rate_limit_per_minute=RATE)
    await register(hostile, sandbox, "resend", 1, {"api_key": SECRET})
    first = await scrape(api)
    before = homing_series(first)
    sent: set[str] = set()
    for n in range(ROUNDS):
        address = f"victim{n}@bogus{n}.example"
        sent.add(address)
        body = {"to": address, "from": f"x{n}@evil.example", "subject": "s", "text": "t"}
        pinned = {**body, "provider": f"bogus-provider-{n}"}
        assert (await hostile.post("/v1/notifications/email", json=pinned)).status_code in (
            422,
            429,
        )
        await hostile.post("/v1/notifications/email", json=body)
        await hostile.post(f"/v1/notifications/chan{n}", json=body)
        await hostile.post("/v1/notifications/email", json={**body, "priority": f"P{n}"})
    text = await scrape(api)
    after = homing_series(text)
    added = after - before
    # Each hostile kind may open a few series (one per fixed reason or channel), never
    # one per request: 1,000 requests, a dozen series at most.
    assert len(added) <= 12, sorted(added)
    for name, labels in after:
        for label, label_value in labels:
            if label not in FOREIGN:
                assert label_value in ALLOWED[label], (name, label, label_value)
    refused = Moves(first, text).moved(
        "homing_notifications_refused_total", channel="email", reason="invalid"
    )
    assert refused == 2 * ROUNDS, "the bogus pins and priorities were refused as invalid"
    for leaked in (hostile.tenant_id, hostile.key, SECRET, *sent):
        assert leaked not in text
    assert "bogus-provider" not in text and "chan1" not in text and "evil.example" not in text
