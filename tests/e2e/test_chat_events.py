"""Telegram's webhook updates from the sandbox to a real Homing over HTTP: a blocked bot
suppresses the chat and unblocking lifts it, /stop and /start, forged and replayed
updates, another tenant's account URL."""

from __future__ import annotations

import json
from typing import Any

import httpx

from homing.crypto import PASSWORD_MASK
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.chat_helpers import bot_token, register_telegram, send_chat
from tests.conftest import TenantClient, make_tenant
from tests.e2e.conftest import Sandbox, deliver, job

HEADER = "X-Telegram-Bot-Api-Secret-Token"


async def _connect(
    tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str, n: int = 1
) -> tuple[dict[str, Any], str]:
    account = await register_telegram(tenant, sandbox, bot_token(n))
    keys = (await sb.http.get("/_sandbox/keys")).json()
    response = await tenant.api.put(
        f"/v1/providers/{account['id']}/inbound", json=keys["telegram"], headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    assert response.json()["kind"] == "secret_token"
    assert response.json()["preview"] == PASSWORD_MASK  # a human may have chosen it
    return account, homing_url + response.json()["path"]


async def _event(sb: Sandbox, kind: str, url: str, to: str = "4242") -> dict[str, Any]:
    response = await sb.http.post(
        "/_sandbox/events",
        json={"provider": "telegram", "message_to": to, "type": kind, "target_url": url},
    )
    assert response.status_code == 200, response.text
    posted: dict[str, Any] = response.json()
    return posted


async def _chat_suppressions(tenant: TenantClient) -> list[tuple[str, str, str]]:
    listed = (await tenant.get("/v1/suppressions", params={"channel": "chat"})).json()["data"]
    return [(s["address"], s["reason"], s["source"]) for s in listed]


async def test_a_blocked_bot_suppresses_the_chat_and_unblocking_lifts_it(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    await send_chat(tenant, to="4242")
    assert await deliver(services) == 1
    blocked = await _event(sb, "blocked", url)
    assert blocked["event"]["my_chat_member"]["new_chat_member"]["status"] == "kicked"
    assert (blocked["status"], blocked["response"]["applied"]) == (200, 1)
    assert await _chat_suppressions(tenant) == [("telegram:4242", "opted_out", "telegram")]
    refused = await send_chat(tenant, to="4242")
    assert (await job(tenant, refused))["status"] == "SUPPRESSED"
    unblocked = await _event(sb, "unblocked", url)
    assert unblocked["response"]["applied"] == 1
    assert await _chat_suppressions(tenant) == []
    # Accepted to be sent again (its delivery waits for Telegram's pace of one a second).
    again = await send_chat(tenant, to="4242")
    assert (await job(tenant, again))["status"] == "PENDING"


async def test_a_bot_removed_from_a_group_suppresses_the_group(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    await send_chat(tenant, to="-1001234")
    await deliver(services)
    removed = await _event(sb, "blocked", url, to="-1001234")
    assert removed["event"]["my_chat_member"]["new_chat_member"]["status"] == "left"
    assert removed["response"]["applied"] == 1
    assert await _chat_suppressions(tenant) == [("telegram:-1001234", "opted_out", "telegram")]


async def test_stop_and_start_commands_suppress_and_lift(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    await send_chat(tenant, to="4242")
    await deliver(services)
    stopped = await _event(sb, "stop", url)
    assert (stopped["event"]["message"]["text"], stopped["response"]["applied"]) == ("/stop", 1)
    assert await _chat_suppressions(tenant) == [("telegram:4242", "opted_out", "telegram")]
    started = await _event(sb, "start", url)
    assert started["response"]["applied"] == 1
    assert await _chat_suppressions(tenant) == []


async def test_an_ordinary_message_is_journaled_and_changes_nothing(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    await send_chat(tenant, to="4242")
    await deliver(services)
    posted = await _event(sb, "stop", url)
    update = {**posted["event"], "update_id": posted["event"]["update_id"] + 1}
    update["message"] = {**update["message"], "text": "/stopping the bot? no, hello"}
    async with httpx.AsyncClient() as http:
        hello = await http.post(url, content=json.dumps(update), headers=posted["headers"])
    assert hello.status_code == 200, hello.text
    assert (hello.json()["received"], hello.json()["ignored"]) == (1, 1)
    # Still suppressed by the /stop before it.
    assert await _chat_suppressions(tenant) == [("telegram:4242", "opted_out", "telegram")]


async def test_a_forged_update_is_401_and_changes_nothing(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    token = sandbox.state.keys.telegram_secret_token
    update = {
        "update_id": 1,
        "my_chat_member": {
            "chat": {"id": 4242, "type": "private"},
            "date": 1_700_000_000,
            "new_chat_member": {"status": "kicked"},
        },
    }
    async with httpx.AsyncClient() as http:
        for headers in (
            {HEADER: token[:-1] + ("A" if token[-1] != "A" else "B")},
            {HEADER: token + "x"},
            {HEADER: ""},
            {},
            {"X-Telegram-Bot-Api-Secret": token},
        ):
            response = await http.post(url, content=json.dumps(update), headers=headers)
            assert response.status_code == 401, response.text
            assert response.json()["error"]["code"] == "unauthenticated"
    assert await _chat_suppressions(tenant) == []


async def test_a_replayed_update_is_a_duplicate_applied_once(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    await send_chat(tenant, to="4242")
    await deliver(services)
    first = await _event(sb, "blocked", url)
    assert first["response"]["applied"] == 1
    # The tenant lifts the suppression by hand; the replay must not bring it back.
    lifted = await tenant.delete(
        "/v1/suppressions", params={"channel": "chat", "address": "telegram:4242"}
    )
    assert lifted.status_code == 204, lifted.text
    async with httpx.AsyncClient() as http:
        replay = await http.post(url, content=json.dumps(first["event"]), headers=first["headers"])
    assert replay.status_code == 200, replay.text
    assert (replay.json()["duplicates"], replay.json()["applied"]) == (1, 0)
    assert await _chat_suppressions(tenant) == []


async def test_another_tenants_account_url_does_not_take_my_token(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    homing_url: str,
) -> None:
    other = await make_tenant(services, api, "other")
    theirs = await register_telegram(other, sandbox, bot_token(2))
    response = await other.api.put(
        f"/v1/providers/{theirs['id']}/inbound",
        json={"secret_token": "their-own-secret_token"},
        headers=other.headers,
    )
    assert response.status_code == 200, response.text
    _, mine = await _connect(tenant, sandbox, sb, homing_url)
    await send_chat(tenant, to="4242")
    await deliver(services)
    posted = await _event(sb, "blocked", mine)
    their_url = homing_url + response.json()["path"]
    async with httpx.AsyncClient() as http:
        crossed = await http.post(
            their_url, content=json.dumps(posted["event"]), headers=posted["headers"]
        )
    assert crossed.status_code == 401, crossed.text
    listed = (await other.get("/v1/suppressions", params={"channel": "chat"})).json()["data"]
    assert listed == []
    assert await _chat_suppressions(tenant) == [("telegram:4242", "opted_out", "telegram")]
