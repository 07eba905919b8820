"""The counters of /metrics move with what happens: a delivery, a failure, a dead
letter, refusals and the queue's depth — through the sandbox over real HTTP, on SQLite
and PostgreSQL (docs/operations.md, "Metrics")."""

from __future__ import annotations

import httpx

from homing.api.scrape import SAMPLE_SECONDS, Scrape
from homing.channels import Channel
from homing.clock import ManualClock
from homing.models import Plan
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, make_tenant, stored_provider
from tests.e2e.conftest import Sandbox, deliver, job, register, send
from tests.metrics_helpers import Moves, scrape, value

A_DAY = 86_400
EMAIL = {"channel": "email"}


async def test_a_delivery_moves_accepted_provider_calls_latency_and_finished(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    before = await scrape(api)
    job_id = await send(tenant)
    assert await deliver(services) == 1
    assert (await job(tenant, job_id))["status"] == "COMPLETED"
    moves = Moves(before, await scrape(api))
    assert moves.moved("homing_notifications_accepted_total", **EMAIL) == 1
    call = {**EMAIL, "provider": "resend"}
    assert moves.moved("homing_provider_calls_total", **call, outcome="success") == 1
    assert moves.moved("homing_provider_call_seconds_count", **call) == 1
    assert moves.moved("homing_jobs_finished_total", **EMAIL, status="completed") == 1
    assert moves.moved("homing_dead_letters_total", queue="notifications-email") == 0


async def test_a_failure_then_a_dead_letter_move_their_counters(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "sendgrid", 1)
    await sb.fault("sendgrid", status=503)
    before = await scrape(api)
    job_id = await send(tenant)
    for _ in range(services.settings.retries.max_attempts):
        assert await deliver(services) == 1
        clock.advance(A_DAY)
    assert (await job(tenant, job_id))["status"] == "FAILED"
    moves = Moves(before, await scrape(api))
    call = {**EMAIL, "provider": "sendgrid"}
    attempts = services.settings.retries.max_attempts
    assert moves.moved("homing_provider_calls_total", **call, outcome="transient") == attempts
    assert moves.moved("homing_provider_calls_total", **call, outcome="success") == 0
    assert moves.moved("homing_jobs_finished_total", **EMAIL, status="failed") == 1
    letter = {"queue": "notifications-email", "error_class": "transient"}
    assert moves.moved("homing_dead_letters_total", **letter) == 1


async def test_a_429_from_every_provider_is_a_throttled_deferral(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
) -> None:
    await register(tenant, sandbox, "postmark", 1)
    await sb.fault("postmark", status=429, retry_after=30, count=1)
    before = await scrape(api)
    await send(tenant)
    assert await deliver(services) == 1
    moves = Moves(before, await scrape(api))
    assert moves.moved("homing_throttled_deferrals_total", **EMAIL) == 1
    call = {**EMAIL, "provider": "postmark", "outcome": "throttled"}
    assert moves.moved("homing_provider_calls_total", **call) == 1
    assert moves.moved("homing_jobs_finished_total", **EMAIL, status="failed") == 0


async def test_refusals_are_counted_by_reason(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    await stored_provider(services, tenant.tenant_id)
    await stored_provider(services, tenant.tenant_id, Channel.SMS, "vonage", **{"from": "Acme"})
    free = await make_tenant(services, api, "free", Plan.FREE, provider=True)
    before = await scrape(api)
    bad = await tenant.post("/v1/notifications/email", json={"to": "ada@example.com"})
    assert bad.status_code == 422
    anonymous = await api.post("/v1/notifications/email", json={})
    assert anonymous.status_code == 401
    statuses = [(await _email(free)).status_code for _ in range(6)]
    assert statuses == [202] * 5 + [429]
    moves = Moves(before, await scrape(api))
    refused = "homing_notifications_refused_total"
    assert moves.moved(refused, **EMAIL, reason="invalid") == 1
    assert moves.moved(refused, **EMAIL, reason="unauthenticated") == 1
    assert moves.moved(refused, **EMAIL, reason="rate_limited") == 1
    assert moves.moved("homing_notifications_accepted_total", **EMAIL) == 5


async def test_a_send_over_quota_is_a_quota_refusal(
    services: Services, api: httpx.AsyncClient
) -> None:
    capped = await make_tenant(
        services, api, "capped", Plan.FREE, provider=True, quota_overrides={"email+webhook": 1}
    )
    assert (await _email(capped)).status_code == 202
    before = await scrape(api)
    over = await _email(capped)
    assert over.status_code == 403, over.text
    assert over.json()["error"]["code"] == "quota_exceeded"
    moves = Moves(before, await scrape(api))
    assert moves.moved("homing_notifications_refused_total", **EMAIL, reason="quota") == 1
    assert moves.moved("homing_notifications_accepted_total", **EMAIL) == 0


async def test_a_send_to_a_suppressed_address_is_a_suppressed_refusal(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    await stored_provider(services, tenant.tenant_id)
    await stored_provider(services, tenant.tenant_id, Channel.SMS, "vonage", **{"from": "Acme"})
    added = await tenant.post(
        "/v1/suppressions", json={"channel": "email", "address": "ada@example.com"}
    )
    assert added.status_code == 201, added.text
    before = await scrape(api)
    response = await _email(tenant)
    assert response.status_code == 202
    assert response.json()["status"] == "SUPPRESSED"
    moves = Moves(before, await scrape(api))
    assert moves.moved("homing_notifications_refused_total", **EMAIL, reason="suppressed") == 1
    assert moves.moved("homing_notifications_accepted_total", **EMAIL) == 0


async def test_the_queue_depth_is_sampled_and_drains_to_zero(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    now = [0.0]
    sampler = Scrape(services.jobs, now=lambda: now[0])
    for _ in range(3):
        await send(tenant)
    depth = {"queue": "notifications-email", "priority": "normal"}
    text = (await sampler.text()).decode()
    assert value(text, "homing_queue_depth", **depth) == 3
    assert value(text, "homing_queue_depth", queue="platform-email", priority="critical") == 0
    assert value(text, "homing_queue_oldest_seconds", **depth) >= 0
    assert await deliver(services) == 3
    cached = (await sampler.text()).decode()
    assert value(cached, "homing_queue_depth", **depth) == 3, "sampled at most every 5 s"
    now[0] += SAMPLE_SECONDS
    drained = (await sampler.text()).decode()
    assert value(drained, "homing_queue_depth", **depth) == 0
    assert value(drained, "homing_queue_oldest_seconds", **depth) == 0


async def _email(tenant: TenantClient) -> httpx.Response:
    body = {"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"}
    return await tenant.post("/v1/notifications/email", json=body)


async def test_inbound_events_are_counted_by_provider_and_result(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    homing_url: str,
) -> None:
    account = await register(tenant, sandbox, "postmark", 1)
    keys = (await sb.http.get("/_sandbox/keys")).json()
    connected = await tenant.api.put(
        f"/v1/providers/{account['id']}/inbound", json=keys["postmark"], headers=tenant.headers
    )
    assert connected.status_code == 200, connected.text
    await send(tenant)
    assert await deliver(services) == 1
    before = await scrape(api)
    event = {
        "provider": "postmark",
        "message_to": "ada@example.com",
        "type": "delivered",
        "target_url": homing_url + connected.json()["path"],
    }
    posted = (await sb.http.post("/_sandbox/events", json=event)).json()
    assert posted["response"]["applied"] == 1, posted
    moves = Moves(before, await scrape(api))
    events = "homing_inbound_events_total"
    assert moves.moved(events, provider="postmark", result="applied") == 1
    assert moves.moved(events, provider="postmark", result="quarantined") == 0
    # A body that fails verification is counted once, its events unread.
    before = await scrape(api)
    forged = await api.post(
        connected.json()["path"],
        content=b'[{"RecordType": "Delivery"}]',
        headers={"Content-Type": "application/json", "Authorization": "Basic Zm9yZ2VkOm5v"},
    )
    assert forged.status_code == 401, forged.text
    moves = Moves(before, await scrape(api))
    assert moves.moved(events, provider="postmark", result="unverified") == 1
    assert moves.moved(events, provider="postmark", result="applied") == 0


async def test_an_operators_day_spike_list_by_provider_dry_run_redrive_drain(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    """docs/operations.md "An operator's day": a SendGrid outage dead-letters jobs; the metrics show
    the spike, the dead letters list by that provider, a dry run counts them, the
    redrive puts them back and the queue drains."""
    await register(tenant, sandbox, "sendgrid", 1)
    await sb.fault("sendgrid", status=503)
    before = await scrape(api)
    for _ in range(3):
        await send(tenant)
    for _ in range(services.settings.retries.max_attempts):
        assert await deliver(services) == 3
        clock.advance(A_DAY)
    letter = {"queue": "notifications-email", "error_class": "transient"}
    assert Moves(before, await scrape(api)).moved("homing_dead_letters_total", **letter) == 3
    listed = await tenant.get("/v1/dead-letters", params={"provider": "sendgrid"})
    assert [d["provider"] for d in listed.json()["data"]] == ["sendgrid"] * 3
    body = {"filter": {"provider": "sendgrid"}}
    dry = await tenant.post("/v1/dead-letters/redrive", json={**body, "dry_run": True})
    assert dry.json() == {"matched": 3, "redriven": 0, "refused": 0, "uncertain": 0}
    await sb.http.delete("/_sandbox/faults")
    done = await tenant.post("/v1/dead-letters/redrive", json=body)
    assert done.json() == {"matched": 3, "redriven": 3, "refused": 0, "uncertain": 0}
    now = [0.0]
    sampler = Scrape(services.jobs, now=lambda: now[0])
    depth = {"queue": "notifications-email", "priority": "normal"}
    assert value((await sampler.text()).decode(), "homing_queue_depth", **depth) == 3
    assert await deliver(services) == 3
    now[0] += SAMPLE_SECONDS
    assert value((await sampler.text()).decode(), "homing_queue_depth", **depth) == 0


async def test_a_batch_counts_each_item_accepted_or_refused(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    await stored_provider(services, tenant.tenant_id)
    await stored_provider(services, tenant.tenant_id, Channel.SMS, "vonage", **{"from": "Acme"})
    good = {"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"}
    messages = [good, {**good, "to": "not an address"}, {**good, "provider": "nobody"}, good]
    before = await scrape(api)
    response = await tenant.post("/v1/notifications/email/batch", json={"messages": messages})
    assert response.status_code == 202, response.text
    moves = Moves(before, await scrape(api))
    assert moves.moved("homing_notifications_accepted_total", **EMAIL) == 2
    assert moves.moved("homing_notifications_refused_total", **EMAIL, reason="invalid") == 2


async def test_an_sms_batch_counts_its_refusals_on_the_sms_channel(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    await stored_provider(services, tenant.tenant_id)
    await stored_provider(services, tenant.tenant_id, Channel.SMS, "vonage", **{"from": "Acme"})
    messages = [{"to": "+14155552671", "body": "hi"}, {"to": "not a number", "body": "hi"}]
    before = await scrape(api)
    response = await tenant.post("/v1/notifications/sms/batch", json={"messages": messages})
    assert response.status_code == 202, response.text
    moves = Moves(before, await scrape(api))
    sms = {"channel": "sms"}
    assert moves.moved("homing_notifications_refused_total", **sms, reason="invalid") == 1
    assert moves.moved("homing_notifications_refused_total", **EMAIL, reason="invalid") == 0
