"""Expiry through the sandbox over real HTTP, on SQLite and PostgreSQL: a job not
delivered within its ``ttl_seconds`` ends FAILED ``expired`` and is never sent, and no
backoff or deferral is scheduled past its expiry (docs/reliability.md, "Expiry")."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select

from homing.channels import Channel
from homing.clock import ManualClock
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.store.tables.core import dead_letters, queue_entries
from tests.chat_helpers import register_telegram, send_chat
from tests.conftest import TenantClient, stored_provider
from tests.e2e.conftest import Sandbox, deliver, job, register, send
from tests.e2e.test_sms import register_sms, send_sms


async def _letters(services: Services) -> list[tuple[str, str]]:
    async with services.db.transaction() as conn:
        rows = (await conn.execute(select(dead_letters.c.job_id, dead_letters.c.error_class))).all()
    return [(r.job_id, r.error_class) for r in rows]


async def _entries(services: Services) -> int:
    async with services.db.transaction() as conn:
        return len((await conn.execute(select(queue_entries.c.job_id))).all())


async def test_a_job_expiring_while_backing_off_ends_expired_and_is_never_sent(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    # One 503, then the provider would accept: only expiry stops the second send.
    await sb.fault("resend", status=503, count=1)
    job_id = await send(tenant, ttl_seconds=60)
    assert await deliver(services) == 1
    assert (await job(tenant, job_id))["status"] == "PENDING"
    clock.advance(61)
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "expired"
    assert [a["outcome"] for a in body["attempts"]] == ["transient"]
    assert await sb.messages("resend") == []
    # Visible where operators look for failed jobs: the dead-letter queue.
    assert await _letters(services) == [(job_id, "expired")]
    assert await _entries(services) == 0


async def test_a_job_expiring_while_deferred_ends_expired_and_is_never_sent(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=429, retry_after=30, count=1)
    job_id = await send(tenant, ttl_seconds=60)
    assert await deliver(services) == 1
    assert (await job(tenant, job_id))["error_class"] == "throttled"
    clock.advance(61)
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert (body["status"], body["error_class"]) == ("FAILED", "expired")
    assert await sb.messages("resend") == []


async def test_a_backoff_that_would_end_past_the_expiry_ends_the_job_at_once(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=503)
    # The first backoff is at least retry_base/2 = 5 s (tests/fixtures.py): past a 4 s ttl.
    job_id = await send(tenant, ttl_seconds=4)
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert (body["status"], body["error_class"]) == ("FAILED", "expired")
    assert "before its next try" in body["error"]
    assert len(body["attempts"]) == 1
    assert await _entries(services) == 0


async def test_a_deferral_past_the_expiry_ends_the_job_at_once(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=429, retry_after=120)
    job_id = await send(tenant, ttl_seconds=60)
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert (body["status"], body["error_class"]) == ("FAILED", "expired")
    assert await _letters(services) == [(job_id, "expired")]


async def test_a_job_within_its_ttl_is_delivered_and_shows_its_expiry(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(tenant, ttl_seconds=3600)
    body = await job(tenant, job_id)
    created = datetime.fromisoformat(body["created_at"])
    assert datetime.fromisoformat(body["expires_at"]) - created == timedelta(seconds=3600)
    assert await deliver(services) == 1
    assert (await job(tenant, job_id))["status"] == "COMPLETED"
    assert len(await sb.messages("resend")) == 1


async def test_the_tenant_default_ttl_applies_per_channel_and_a_body_overrides_it(
    services: Services, tenant: TenantClient
) -> None:
    await stored_provider(services, tenant.tenant_id)  # accepted; these jobs are not delivered
    changed = await tenant.patch("/v1/settings", json={"default_ttl_seconds": {"email": 120}})
    assert changed.status_code == 200, changed.text
    assert changed.json()["default_ttl_seconds"] == {"email": 120}
    defaulted = await job(tenant, await send(tenant))
    named = await job(tenant, await send(tenant, ttl_seconds=30, subject="Other"))
    webhook = await tenant.post(
        "/v1/notifications/webhook", json={"url": "https://hooks.example/x", "payload": {}}
    )
    assert webhook.status_code == 202, webhook.text
    unbounded = await job(tenant, webhook.json()["id"])

    def ttl(body: dict[str, str]) -> float | None:
        if body["expires_at"] is None:
            return None
        delta = datetime.fromisoformat(body["expires_at"]) - datetime.fromisoformat(
            body["created_at"]
        )
        return delta.total_seconds()

    assert (ttl(defaulted), ttl(named), ttl(unbounded)) == (120, 30, None)


async def test_a_suspended_tenants_held_job_is_put_back_no_later_than_its_expiry(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, clock: ManualClock
) -> None:
    await register(tenant, sandbox, "resend", 1)
    job_id = await send(tenant, ttl_seconds=60)
    expires_at = datetime.fromisoformat((await job(tenant, job_id))["expires_at"])
    await services.tenant_admin.suspend(tenant.tenant_id)
    await deliver(services)  # held for an hour, but not past the expiry
    async with services.db.transaction() as conn:
        entry = (
            await conn.execute(select(queue_entries).where(queue_entries.c.job_id == job_id))
        ).one()
    assert entry.available_at == expires_at.timestamp()
    await services.tenant_admin.unsuspend(tenant.tenant_id)
    clock.advance(61)
    await deliver(services)
    body = await job(tenant, job_id)
    assert (body["status"], body["error_class"]) == ("FAILED", "expired")


async def test_an_sms_and_a_chat_message_take_ttl_seconds_like_an_email(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    await register_telegram(tenant, sandbox)
    await sb.fault("twilio", status=503, count=1)
    sms = await send_sms(tenant, ttl_seconds=60)
    chat = await send_chat(tenant, ttl_seconds=3600)
    assert await deliver(services) == 2
    assert (await job(tenant, chat))["status"] == "COMPLETED"
    accepted = datetime.fromisoformat((await job(tenant, chat))["created_at"])
    expires = datetime.fromisoformat((await job(tenant, chat))["expires_at"])
    assert expires - accepted == timedelta(seconds=3600)
    clock.advance(61)
    assert await deliver(services) == 1
    body = await job(tenant, sms)
    assert (body["status"], body["error_class"]) == ("FAILED", "expired")
    assert await sb.messages("twilio") == []


async def test_the_tenant_default_ttl_for_sms_applies_and_a_body_overrides_it(
    services: Services, tenant: TenantClient
) -> None:
    await stored_provider(services, tenant.tenant_id, Channel.SMS, "vonage", **{"from": "Acme"})
    changed = await tenant.patch("/v1/settings", json={"default_ttl_seconds": {"sms": 300}})
    assert changed.status_code == 200, changed.text

    async def ttl(**overrides: int) -> float:
        body = await job(tenant, await send_sms(tenant, **overrides))
        made = datetime.fromisoformat(body["created_at"])
        return (datetime.fromisoformat(body["expires_at"]) - made).total_seconds()

    assert (await ttl(), await ttl(ttl_seconds=30)) == (300, 30)
