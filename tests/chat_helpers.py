"""Chat helpers shared by the chat tests: register a sandbox bot or webhook, send."""

from __future__ import annotations

from typing import Any

from homing.sandbox.server import SandboxServer
from tests.conftest import TenantClient

# The sandbox takes any token of Telegram's form; "invalid" in it is a 401.
BOT_TOKEN = "123456789:AAHsandboxsandboxsandboxsandbox_tok"


def bot_token(n: int) -> str:
    """A distinct valid token per bot (a bot's id is its token's first part)."""
    return f"{100000 + n}:AAHsandboxsandboxsandboxsandbox_{n:03d}"


async def register_telegram(
    tenant: TenantClient,
    sandbox: SandboxServer,
    token: str = BOT_TOKEN,
    **config: Any,
) -> dict[str, Any]:
    """A Telegram bot on the sandbox, through the API (201 asserted)."""
    response = await tenant.post(
        "/v1/providers",
        json={
            "channel": "chat",
            "provider": "telegram",
            "credentials": {"bot_token": token},
            "config": {"base_url": sandbox.provider_base_url("telegram"), **config},
        },
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def slack_url(sandbox: SandboxServer, last: str = "XyZsecretpart123") -> str:
    """A Slack incoming-webhook URL on the sandbox (``last`` may steer an error)."""
    return f"{sandbox.base_url}/slack/services/T0001/B0001/{last}"


async def register_slack(
    tenant: TenantClient, sandbox: SandboxServer, last: str = "XyZsecretpart123"
) -> dict[str, Any]:
    """A Slack webhook on the sandbox, through the API (201 asserted)."""
    response = await tenant.post(
        "/v1/providers",
        json={
            "channel": "chat",
            "provider": "slack",
            "credentials": {"webhook_url": slack_url(sandbox, last)},
        },
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def send_chat(tenant: TenantClient, to: str = "4242", **overrides: Any) -> str:
    """Queue one chat message (202 asserted); its job id."""
    body = {"to": to, "text": "Hello from the bot", **overrides}
    response = await tenant.post("/v1/notifications/chat", json=body)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id
