"""Accept → deliver through the sandbox over real HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from homing.clock import ManualClock
from homing.models import Queue
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.store.tables.core import dead_letters
from tests.conftest import TenantClient, make_tenant
from tests.e2e.conftest import SLACK_PATH, Sandbox, deliver, job, register, send
from tests.store_helpers import pending_count

A_DAY = 86_400


def _trail(body: dict[str, object]) -> list[tuple[object, ...]]:
    attempts = body["attempts"]
    assert isinstance(attempts, list)
    return [(a["number"], a["provider"], a["outcome"]) for a in attempts]


async def test_delivers_through_the_first_provider(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(tenant)
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert body["provider"] == "resend"
    assert _trail(body) == [(1, "resend", "success")]
    [message] = await sb.messages("resend")
    assert message["to"] == ["ada@example.com"]
    assert message["job_id"] == job_id


async def test_fallback_after_a_503_shows_both_providers(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "sendgrid", 1)
    await register(tenant, sandbox, "postmark", 2)
    await sb.fault("sendgrid", status=503)
    job_id = await send(tenant)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert body["provider"] == "postmark"
    assert _trail(body) == [(1, "sendgrid", "transient"), (1, "postmark", "success")]
    assert body["attempts"][0]["status_code"] == 503
    assert await sb.messages("sendgrid") == []
    assert len(await sb.messages("postmark")) == 1


async def test_all_providers_failing_dead_letters_after_max_attempts_and_alerts(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "mailgun", 1)
    await register(tenant, sandbox, "resend", 2)
    await sb.fault("mailgun", status=500)
    await sb.fault("resend", status=503)
    job_id = await send(tenant)
    for _ in range(services.settings.retries.max_attempts):
        assert await deliver(services) == 1
        clock.advance(A_DAY)
    assert await deliver(services) == 0
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "transient"
    passes = [n for n, _, _ in _trail(body)]
    assert passes == [1, 1, 2, 2, 3, 3]
    async with services.db.transaction() as conn:
        letters = (await conn.execute(select(dead_letters))).all()
    assert [row.job_id for row in letters] == [job_id]
    assert letters[0].payload["to"] == "ada@example.com"
    # The provider is named once ("resend: HTTP 503…", not "resend: resend: HTTP 503…").
    assert letters[0].error.startswith("resend: HTTP 503"), letters[0].error
    assert body["error"].startswith("resend: HTTP 503"), body["error"]
    await services.alerter.flush()
    [alert] = await sb.slack()
    assert alert["path"] == SLACK_PATH.removeprefix("/slack")
    assert job_id in alert["payload"]["text"]


async def test_a_400_from_the_provider_fails_after_one_pass(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "sendgrid", 1)
    await register(tenant, sandbox, "resend", 2)
    await sb.fault("sendgrid", status=400)
    job_id = await send(tenant)
    await deliver(services)
    clock.advance(A_DAY)
    assert await deliver(services) == 0
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "message_permanent"
    assert _trail(body) == [(1, "sendgrid", "message_permanent")]
    assert await sb.messages() == []


async def test_rejected_credentials_skip_that_provider_for_the_rest_of_the_job(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "sendgrid", 1)
    await register(tenant, sandbox, "resend", 2)
    await sb.fault("sendgrid", status=401)
    await sb.fault("resend", status=503, count=1)
    job_id = await send(tenant)
    await deliver(services)
    clock.advance(A_DAY)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert _trail(body) == [
        (1, "sendgrid", "provider_permanent"),
        (1, "resend", "transient"),
        (2, "resend", "success"),
    ]


async def test_pinned_provider_uses_only_it_and_its_fallback(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "sendgrid", 1)
    resend = await register(tenant, sandbox, "resend", 2)
    await register(tenant, sandbox, "postmark", 3)
    await sb.fault("postmark", status=500)
    job_id = await send(tenant, provider="postmark", fallback=resend["id"])
    await deliver(services)
    body = await job(tenant, job_id)
    assert _trail(body) == [(1, "postmark", "transient"), (1, "resend", "success")]
    assert await sb.messages("sendgrid") == []
    unknown = await tenant.post(
        "/v1/notifications/email",
        json={"to": "a@b.co", "from": "c@d.co", "subject": "s", "text": "t", "provider": "nope"},
    )
    assert unknown.status_code == 422
    assert unknown.json()["error"]["code"] == "unknown_provider"


async def test_concurrent_retries_of_a_failed_job_send_once(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=422, count=1)
    job_id = await send(tenant)
    await deliver(services)
    assert (await job(tenant, job_id))["status"] == "FAILED"
    responses = await asyncio.gather(*(tenant.post(f"/v1/jobs/{job_id}/retry") for _ in range(6)))
    codes = sorted(r.status_code for r in responses)
    assert codes == [202, 409, 409, 409, 409, 409]
    assert await pending_count(services.db, Queue.EMAIL) == 1
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert len(await sb.messages("resend")) == 1


async def test_retry_of_a_job_that_is_not_failed_is_409(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(tenant)
    response = await tenant.post(f"/v1/jobs/{job_id}/retry")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"


async def test_another_tenants_job_is_404(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(tenant)
    other = await make_tenant(services, tenant.api, "other")
    for response in (
        await other.get(f"/v1/jobs/{job_id}"),
        await other.post(f"/v1/jobs/{job_id}/retry"),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert (await other.get("/v1/jobs")).json()["data"] == []


async def test_idempotency_key_replays_the_job_and_refuses_a_changed_body(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    key = {"Idempotency-Key": "order-1234"}
    first = await send(tenant, headers=key)
    await deliver(services)
    again = await tenant.post(
        "/v1/notifications/email",
        json={
            "to": "ada@example.com",
            "from": "Acme <hello@acme.example>",
            "subject": "Welcome",
            "text": "Hello Ada",
        },
        headers=key,
    )
    assert again.status_code == 202
    assert again.json()["id"] == first
    assert again.headers["Idempotent-Replayed"] == "true"
    await deliver(services)
    assert len(await sb.messages()) == 1
    changed = await tenant.post(
        "/v1/notifications/email",
        json={"to": "bob@example.com", "from": "hello@acme.example", "subject": "x", "text": "y"},
        headers=key,
    )
    assert changed.status_code == 422
    assert changed.json()["error"]["code"] == "idempotency_conflict"


async def test_a_timeout_with_at_most_once_is_not_resent(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "postmark", 1)
    await register(tenant, sandbox, "resend", 2)
    await sb.fault("postmark", mode="accept_then_hang")
    job_id = await send(tenant, delivery="at_most_once")
    await deliver(services)
    clock.advance(A_DAY)
    assert await deliver(services) == 0
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "uncertain"
    assert _trail(body) == [(1, "postmark", "uncertain")]
    assert len(await sb.messages("postmark")) == 1
    assert await sb.messages("resend") == []


async def test_a_timeout_at_an_idempotent_provider_is_retried_there_only(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await register(tenant, sandbox, "postmark", 2)
    await sb.fault("resend", mode="timeout", count=1)
    job_id = await send(tenant, delivery="at_most_once")
    await deliver(services)
    clock.advance(A_DAY)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert _trail(body) == [(1, "resend", "uncertain"), (2, "resend", "success")]
    assert await sb.messages("postmark") == []


async def test_a_timeout_with_at_least_once_falls_back(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "sendgrid", 1)
    await register(tenant, sandbox, "resend", 2)
    await sb.fault("sendgrid", mode="timeout")
    job_id = await send(tenant)
    await deliver(services)
    body = await job(tenant, job_id)
    assert _trail(body) == [(1, "sendgrid", "uncertain"), (1, "resend", "success")]


async def test_throttling_everywhere_defers_without_spending_an_attempt(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=429, retry_after=30, count=5)
    job_id = await send(tenant)
    for _ in range(5):
        await deliver(services)
        clock.advance(31)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert [n for n, _, o in _trail(body) if o == "throttled"] == [1, 1, 1, 1, 1]
    assert _trail(body)[-1] == (1, "resend", "success")


async def test_smtp_provider_delivers_over_real_smtp(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    assert sandbox.smtp_port is not None
    await register(
        tenant,
        sandbox,
        "smtp",
        1,
        credentials={
            "host": "127.0.0.1",
            "port": sandbox.smtp_port,
            "username": "mailer",
            "password": "smtp-pass-123456",
            "starttls": False,
        },
    )
    job_id = await send(tenant)
    await deliver(services)
    assert (await job(tenant, job_id))["provider"] == "smtp"
    [message] = await sb.messages("smtp")
    assert message["job_id"] == job_id
