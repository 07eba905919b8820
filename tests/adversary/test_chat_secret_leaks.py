"""The chat credentials (a Telegram bot token, a Slack webhook URL) appear nowhere but
sealed: not in the database, an answer, an attempt, a log line or the sandbox's record."""

from __future__ import annotations

import io

from homing.clock import ManualClock
from homing.logs import redact_text
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.adversary.test_secret_leaks import _dump, _leaks
from tests.chat_helpers import BOT_TOKEN, register_slack, register_telegram, send_chat
from tests.conftest import TenantClient, deliver
from tests.fixtures import Sandbox


async def test_chat_credentials_stay_sealed(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
    log_stream: io.StringIO,
) -> None:
    token_secret = BOT_TOKEN.split(":")[1]
    webhook_secret = "ZZslackwebhooksecret42"
    places: dict[str, str] = {}
    # Every line Homing logs meanwhile (at debug level) is in log_stream.
    places["telegram account"] = str(await register_telegram(tenant, sandbox))
    slack = await register_slack(tenant, sandbox, webhook_secret)
    places["slack account"] = str(slack)
    await sb.fault("telegram", status=500, count=1)
    await sb.fault("slack", status=503, count=1)
    telegram_job = await send_chat(tenant, provider="telegram")
    slack_job = await send_chat(tenant, to="#ops", provider=slack["id"])
    for _ in range(2):
        await deliver(services)
        clock.advance(120)
    for job_id in (telegram_job, slack_job):
        places[job_id] = (await tenant.get(f"/v1/jobs/{job_id}")).text
        assert '"COMPLETED"' in places[job_id]
    places["providers"] = (await tenant.get("/v1/providers")).text
    places["database"] = await _dump(services)
    places["logs"] = log_stream.getvalue()
    places["sandbox messages"] = str(await sb.messages())
    assert _leaks(token_secret, places) == []
    # The sandbox is Slack here: it knows the URL it was posted to.
    del places["sandbox messages"]
    assert _leaks(webhook_secret, places) == []


def test_the_log_redactor_knows_chat_credentials() -> None:
    line = f"GET https://api.telegram.org/bot{BOT_TOKEN}/getMe https://hooks.slack.com/services/T1/B2/abcdef123"
    redacted = redact_text(line)
    assert BOT_TOKEN.split(":")[1] not in redacted and "abcdef123" not in redacted
    assert "bot123456789:[REDACTED]" in redacted
