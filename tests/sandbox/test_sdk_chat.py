"""The sandbox driven as Telegram's and Slack's clients drive the real services: the Bot
API's four documented ways of passing parameters (core.telegram.org/bots/api#making-
requests), python-telegram-bot 22 (the de-facto Python client: Telegram publishes none)
and Slack's official slack-sdk 3 ``WebhookClient``.

python-telegram-bot takes the sandbox as ``Bot(base_url=…)`` (telegram/_bot.py) and
posts form bodies; it builds a ``Message`` only from one with ``date`` and a ``chat``
with its ``type``. slack-sdk's ``WebhookClient(url)`` is synchronous: a thread.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from slack_sdk.webhook import WebhookClient
from telegram import Bot
from telegram.constants import ChatType
from telegram.error import BadRequest, ChatMigrated, Forbidden, InvalidToken, RetryAfter

from homing.sandbox import SandboxServer

TOKEN = "123456:AAHsandboxsandboxsandboxsandbox_t"


def _bot(sandbox: SandboxServer, token: str = TOKEN) -> Bot:
    return Bot(token, base_url=sandbox.provider_base_url("telegram") + "/bot")


@pytest.mark.parametrize(
    ("chat", "kind"),
    [
        (4242, ChatType.PRIVATE),
        (-4242, ChatType.GROUP),
        (-1004242, ChatType.SUPERGROUP),
        ("@sandbox_news", ChatType.CHANNEL),
    ],
)
async def test_python_telegram_bot_sends_and_reads_the_message(
    guarded_sandbox: SandboxServer, chat: int | str, kind: ChatType
) -> None:
    async with _bot(guarded_sandbox) as bot:
        me = await bot.get_me()
        message = await bot.send_message(chat, "Hello from the SDK")
    assert (me.id, me.is_bot) == (123456, True)
    assert (message.chat.type, message.text) == (kind, "Hello from the SDK")
    assert isinstance(message.date, datetime) and message.from_user == me
    if isinstance(chat, int):
        assert message.chat.id == chat
    [recorded] = guarded_sandbox.state.recorder.messages("telegram")
    assert (recorded.message_id, recorded.to) == (str(message.message_id), (str(chat),))


async def test_python_telegram_bot_reads_each_refusal(
    guarded_sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "1")  # retry_after as a timedelta, as PTB 23 will
    async with _bot(guarded_sandbox) as bot:
        with pytest.raises(Forbidden):
            await bot.send_message(4031, "hi")
        with pytest.raises(BadRequest, match=r"(?i)chat not found"):
            await bot.send_message(4001, "hi")
        with pytest.raises(ChatMigrated) as migrated:
            await bot.send_message(-5551, "hi")
        assert migrated.value.new_chat_id == -1005551
        await bot.send_message(77, "first")
        with pytest.raises(RetryAfter) as paced:
            await bot.send_message(77, "second within the second")
        assert isinstance(paced.value.retry_after, timedelta)
        assert paced.value.retry_after.total_seconds() >= 1
    with pytest.raises(InvalidToken):
        async with _bot(guarded_sandbox, "123:AAinvalidinvalidinvalidinvalid"):
            pass


def _query(fields: dict[str, str]) -> dict[str, Any]:
    return {"params": fields}


def _form(fields: dict[str, str]) -> dict[str, Any]:
    return {"data": fields}


def _multipart(fields: dict[str, str]) -> dict[str, Any]:
    # A file-less multipart body: httpx writes multipart when files are given.
    return {"data": fields, "files": {"unused": ("", b"", "application/octet-stream")}}


def _json(fields: dict[str, str]) -> dict[str, Any]:
    return {"content": json.dumps(fields), "headers": {"Content-Type": "application/json"}}


@pytest.mark.parametrize(
    "passing",
    [
        _query,
        _form,
        _multipart,
        _json,
    ],
    ids=["query string", "urlencoded", "multipart", "json"],
)
async def test_every_documented_way_of_passing_parameters_is_accepted(
    guarded_sandbox: SandboxServer, passing: Any
) -> None:
    fields = {"chat_id": "4242", "text": "Hello"}
    url = f"{guarded_sandbox.provider_base_url('telegram')}/bot{TOKEN}/sendMessage"
    async with httpx.AsyncClient() as http:
        request = passing(fields)
        method = "GET" if "params" in request else "POST"
        response = await http.request(method, url, **request)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert (result["chat"], result["text"]) == (
        {"id": 4242, "type": "private", "first_name": "Sandbox"},
        "Hello",
    )
    assert isinstance(result["date"], int) and result["from"]["is_bot"] is True


async def test_slack_sdk_webhook_client_posts_and_reads_the_answer(
    guarded_sandbox: SandboxServer,
) -> None:
    url = guarded_sandbox.provider_base_url("slack") + "/services/T000/B000/sandbox"
    client = WebhookClient(url)
    sent = await asyncio.to_thread(client.send, text="Hello from the SDK")
    assert (sent.status_code, sent.body) == (200, "ok")
    [recorded] = guarded_sandbox.state.recorder.messages("slack")
    assert recorded.text == "Hello from the SDK"
    # Homing's credential check: a message without text is refused for want of it.
    empty = await asyncio.to_thread(client.send_dict, {"unfurl_links": False})
    assert (empty.status_code, empty.body) == (400, "no_text")
    gone = WebhookClient(url.replace("sandbox", "gone"))
    refused = await asyncio.to_thread(gone.send, text="hi")
    assert (refused.status_code, refused.body) == (404, "no_service")
