"""The sandbox's Telegram and Slack contracts over real HTTP, and its enforcement of
their rate rules (429 as each vendor answers it, counted per rule)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from homing.sandbox import SandboxServer
from homing.sandbox.chat_rules import RuleBook

TOKEN = "123456:AAHsandboxsandboxsandboxsandbox_t"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with (
        SandboxServer(port=0, smtp_port=None) as server,
        httpx.AsyncClient(base_url=server.base_url) as http,
    ):
        yield http


async def _send(http: httpx.AsyncClient, chat: Any, text: str = "hi") -> httpx.Response:
    return await http.post(
        f"/telegram/bot{TOKEN}/sendMessage", json={"chat_id": chat, "text": text}
    )


async def test_send_message_answers_as_telegram_and_records(client: httpx.AsyncClient) -> None:
    response = await _send(client, 4242, "hello")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True and body["result"]["chat"]["id"] == 4242
    [message] = (await client.get("/_sandbox/messages", params={"provider": "telegram"})).json()
    assert (message["to"], message["text"], message["from"]) == (["4242"], "hello", "123456")
    stats = (await client.get("/_sandbox/stats")).json()
    assert (stats["received"]["telegram"], stats["requests"]["telegram"]) == (1, 1)


async def test_get_me_and_bad_tokens(client: httpx.AsyncClient) -> None:
    me = await client.get(f"/telegram/bot{TOKEN}/getMe")
    assert me.json()["result"]["is_bot"] is True
    bad = await client.get("/telegram/botnot-a-token/getMe")
    assert (bad.status_code, bad.json()["description"]) == (404, "Not Found")
    invalid = await client.get("/telegram/bot123:AAinvalidinvalidinvalidinvalid/getMe")
    assert invalid.status_code == 401 and invalid.json()["ok"] is False


@pytest.mark.parametrize(
    ("chat", "status", "words"),
    [
        ("4031", 403, "blocked by the user"),
        ("4001", 400, "chat not found"),
        ("12ab", 400, "chat not found"),
    ],
)
async def test_chat_ids_steer_failures(
    client: httpx.AsyncClient, chat: str, status: int, words: str
) -> None:
    response = await _send(client, chat)
    assert response.status_code == status
    assert words in response.json()["description"]


async def test_a_migrated_group_names_its_supergroup(client: httpx.AsyncClient) -> None:
    response = await _send(client, -5551)
    assert response.status_code == 400
    assert response.json()["parameters"] == {"migrate_to_chat_id": -1005551}


async def test_texts_are_bounded(client: httpx.AsyncClient) -> None:
    assert (await _send(client, 1, "x" * 4097)).json()["description"].endswith("too long")
    assert (await _send(client, 1, "")).status_code == 400


async def test_the_chat_rule_answers_429_with_retry_after_and_counts_it(
    client: httpx.AsyncClient,
) -> None:
    assert (await _send(client, 77)).status_code == 200
    refused = await _send(client, 77)
    assert refused.status_code == 429
    body = refused.json()
    assert body["error_code"] == 429 and body["parameters"]["retry_after"] == 1
    assert (await _send(client, 78)).status_code == 200
    stats = (await client.get("/_sandbox/stats")).json()
    assert stats["rules"]["refused"]["telegram.chat"] == 1
    assert stats["received"]["telegram"] == 2


async def test_the_bot_rule_allows_30_a_second(client: httpx.AsyncClient) -> None:
    answers = [(await _send(client, 1000 + n)).status_code for n in range(31)]
    assert answers == [200] * 30 + [429]
    assert (await client.get("/_sandbox/stats")).json()["rules"]["refused"]["telegram.bot"] == 1


async def test_slack_webhooks_are_paced_and_steered(client: httpx.AsyncClient) -> None:
    path = "/slack/services/T1/B1/secret"
    assert (await client.post(path, json={"text": "a"})).text == "ok"
    paced = await client.post(path, json={"text": "b"})
    assert (paced.status_code, paced.text, paced.headers["retry-after"]) == (
        429,
        "rate_limited",
        "1",
    )
    archived = await client.post("/slack/services/T1/B1/archived", json={"text": "c"})
    assert (archived.status_code, archived.text) == (410, "channel_is_archived")
    empty = await client.post("/slack/services/T1/B2/other", json={})
    assert (empty.status_code, empty.text) == (400, "no_text")
    stats = (await client.get("/_sandbox/stats")).json()
    assert stats["rules"]["refused"]["slack.webhook"] == 1
    assert stats["received"]["slack"] == 1
    # The alerter's paths (not /services/…) are recorded but not paced.
    for _ in range(2):
        assert (await client.post("/slack/T0/B0/alerts", json={"text": "x"})).text == "ok"


def test_rule_windows_move_and_refuse_without_counting() -> None:
    now = [0.0]
    book = RuleBook(clock=lambda: now[0])
    rules = [(("bot", 2, 1.0), "b"), (("chat", 1, 1.0), "b/1")]
    assert book.take("telegram", rules) is None
    refusal = book.take("telegram", rules)
    assert refusal is not None and (refusal.rule, refusal.retry_after) == ("chat", 1)
    assert book.take("telegram", [(("bot", 2, 1.0), "b"), (("chat", 1, 1.0), "b/2")]) is None
    assert book.take("telegram", [(("bot", 2, 1.0), "b"), (("chat", 1, 1.0), "b/3")]) is not None
    now[0] = 1.0
    assert book.take("telegram", rules) is None
    assert book.refused == {"telegram.chat": 1, "telegram.bot": 1}
