"""Chat end to end: the API, the worker and the sandbox's Telegram and Slack over real
HTTP, on SQLite and PostgreSQL — send, each failure class, suppression, pacing."""

from __future__ import annotations

from typing import Any

from homing.clock import ManualClock
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.chat_helpers import (
    BOT_TOKEN,
    register_slack,
    register_telegram,
    send_chat,
    slack_url,
)
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, job


def _trail(body: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(a["number"], a["provider"], a["outcome"]) for a in body["attempts"]]


async def _stats(sb: Sandbox) -> dict[str, Any]:
    response = await sb.http.get("/_sandbox/stats")
    response.raise_for_status()
    stats: dict[str, Any] = response.json()
    return stats


async def test_telegram_message_is_sent_with_its_parse_mode(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_telegram(tenant, sandbox)
    job_id = await send_chat(tenant, to="4242", text="*bold*", format="markdown")
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert _trail(body) == [(1, "telegram", "success")]
    [message] = await sb.messages("telegram")
    assert message["to"] == ["4242"]
    assert message["text"] == "*bold*"
    assert message["subject"] == "MarkdownV2"  # the sandbox keeps parse_mode there
    assert message["from"] == BOT_TOKEN.split(":")[0]


async def test_a_bot_blocked_by_the_chat_fails_the_job_and_suppresses_the_chat(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_telegram(tenant, sandbox)
    first = await send_chat(tenant, to="4031")
    await deliver(services)
    body = await job(tenant, first)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "message_permanent"
    assert "blocked by the user" in body["error"]
    suppressions = (await tenant.get("/v1/suppressions")).json()["data"]
    assert [(s["channel"], s["address"], s["reason"]) for s in suppressions] == [
        ("chat", "telegram:4031", "blocked")
    ]
    second = await send_chat(tenant, to="4031")
    assert (await job(tenant, second))["status"] == "SUPPRESSED"
    lifted = await tenant.delete(
        "/v1/suppressions", params={"channel": "chat", "address": "telegram:4031"}
    )
    assert lifted.status_code == 204
    assert (await tenant.get("/v1/suppressions")).json()["data"] == []
    other = await send_chat(tenant, to="5032")
    await deliver(services)
    assert (await job(tenant, other))["status"] == "COMPLETED"
    assert (await _stats(sb))["requests"]["telegram"] == 2


async def test_a_chat_never_found_is_message_permanent(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register_telegram(tenant, sandbox)
    job_id = await send_chat(tenant, to="4001")
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "message_permanent"
    assert "chat not found" in body["error"]
    assert (await tenant.get("/v1/suppressions")).json()["data"] == []


async def test_a_group_that_became_a_supergroup_is_followed_once(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_telegram(tenant, sandbox)
    job_id = await send_chat(tenant, to="-5557")
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert body["attempts"][0]["response_excerpt"] == "migrated to chat -1005557"
    [message] = await sb.messages("telegram")
    assert message["to"] == ["-1005557"]


async def test_a_telegram_429_defers_after_retry_after_without_spending_an_attempt(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register_telegram(tenant, sandbox)
    await sb.fault("telegram", status=429, retry_after=7, count=1)
    job_id = await send_chat(tenant)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "PENDING"
    assert _trail(body) == [(1, "telegram", "throttled")]
    assert body["attempts"][0]["status_code"] == 429
    clock.advance(8)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert {a["number"] for a in body["attempts"]} == {1}, "the deferral spent no attempt"


async def test_a_telegram_5xx_is_transient_and_retried(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register_telegram(tenant, sandbox)
    await sb.fault("telegram", status=502, count=1)
    job_id = await send_chat(tenant)
    await deliver(services)
    assert _trail(await job(tenant, job_id)) == [(1, "telegram", "transient")]
    clock.advance(60)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert _trail(body)[-1] == (2, "telegram", "success")


async def test_a_token_telegram_rejects_is_refused_at_registration(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    response = await tenant.post(
        "/v1/providers",
        json={
            "channel": "chat",
            "provider": "telegram",
            "credentials": {"bot_token": "123:AAinvalidinvalidinvalidinvalid"},
            "config": {"base_url": sandbox.provider_base_url("telegram")},
        },
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_credentials"
    assert "invalid" not in response.text.replace("invalid_credentials", "")


async def test_a_bot_token_later_rejected_skips_the_provider(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_telegram(tenant, sandbox)
    await sb.fault("telegram", status=401)
    job_id = await send_chat(tenant)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "provider_permanent"
    assert BOT_TOKEN not in str(body)


async def test_a_critical_message_gets_the_slot_a_broadcast_leaves(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register_telegram(tenant, sandbox)
    broadcast = [await send_chat(tenant, to=str(5000 + i), priority="LOW") for i in range(40)]
    await deliver(services)
    sent = [i for i in broadcast if (await job(tenant, i))["status"] == "COMPLETED"]
    assert len(sent) == 27, "LOW fills 27 of the bot's 30 a second"
    answer = await send_chat(tenant, to="6000", priority="CRITICAL")
    await deliver(services)
    assert (await job(tenant, answer))["status"] == "COMPLETED"


async def test_slack_message_is_posted_to_the_webhook(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    account = await register_slack(tenant, sandbox)
    assert "XyZsecretpart123" not in str(account)
    assert "T0001" not in account["credentials_preview"]
    job_id = await send_chat(tenant, to="#alerts", text="*deploy* done", format="markdown")
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    [post] = [p for p in await sb.slack() if p["path"].startswith("/services/")]
    assert post["payload"] == {"text": "*deploy* done", "mrkdwn": True}
    assert "XyZsecretpart123" not in str(body)


async def test_a_slack_webhook_archived_since_is_provider_permanent(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_slack(tenant, sandbox)
    await sb.fault("slack", status=404)
    job_id = await send_chat(tenant, to="#alerts")
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "provider_permanent"


async def test_a_slack_payload_refused_is_message_permanent(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_slack(tenant, sandbox)
    await sb.fault("slack", status=400)
    job_id = await send_chat(tenant, to="#alerts")
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "message_permanent"
    assert "invalid_payload" in body["error"]


async def test_a_job_goes_only_to_accounts_of_its_vendor(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_slack(tenant, sandbox)
    await register_telegram(tenant, sandbox)
    job_id = await send_chat(tenant, to="#alerts")  # the first chat provider: Slack
    pinned = await send_chat(tenant, to="4242", provider="telegram")
    await deliver(services)
    assert _trail(await job(tenant, job_id)) == [(1, "slack", "success")]
    assert _trail(await job(tenant, pinned)) == [(1, "telegram", "success")]


async def test_a_slack_429_defers_after_retry_after(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_slack(tenant, sandbox)
    await sb.fault("slack", status=429, retry_after=30, count=1)
    job_id = await send_chat(tenant, to="#alerts")
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "PENDING"
    assert _trail(body) == [(1, "slack", "throttled")]


async def test_a_dead_slack_webhook_is_refused_at_registration(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    response = await tenant.post(
        "/v1/providers",
        json={
            "channel": "chat",
            "provider": "slack",
            "credentials": {"webhook_url": slack_url(sandbox, "gone")},
        },
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_credentials"
    assert "services/T0001" not in response.text
