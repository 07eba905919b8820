"""Telegram adapter: the exact sendMessage and getMe requests, the classification table,
the supergroup migration followed once, and the token kept out of every detail."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from homing.errors import InvalidCredentials
from homing.models import FailureClass
from homing.providers.base import ProviderFailure
from homing.providers.chat_base import MAX_RETRY_AFTER, OutgoingChat, RecipientBlocked
from homing.vendors.telegram.adapter import TelegramProvider

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
MESSAGE = OutgoingChat(job_id="job_1", to="-1001234", text="Deploy *done*", format="markdown")
Handler = Callable[[httpx.Request], httpx.Response]


def bot(handler: Handler, requests: list[httpx.Request]) -> TelegramProvider:
    def record(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return handler(request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(record))
    return TelegramProvider({"bot_token": TOKEN}, {}, http)


def answer(status: int, **body: Any) -> Handler:
    return lambda request: httpx.Response(status, json=body)


def failed(status: int, description: str, **parameters: Any) -> Handler:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if parameters:
        body["parameters"] = parameters
    return lambda request: httpx.Response(status, json=body)


async def failure_of(handler: Handler) -> ProviderFailure:
    with pytest.raises(ProviderFailure) as raised:
        await bot(handler, []).send(MESSAGE)
    return raised.value


async def test_send_message_request_is_pinned() -> None:
    requests: list[httpx.Request] = []
    result = await bot(answer(200, ok=True, result={"message_id": 42}), requests).send(MESSAGE)
    [request] = requests
    assert request.method == "POST"
    assert str(request.url) == f"https://api.telegram.org/bot{TOKEN}/sendMessage"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == {
        "chat_id": -1001234,
        "text": "Deploy *done*",
        "parse_mode": "MarkdownV2",
    }
    assert (result.provider_message_id, result.status_code) == ("42", 200)


@pytest.mark.parametrize(
    ("to", "fmt", "expected"),
    [
        ("4242", "plain", {"chat_id": 4242, "text": "t"}),
        ("@mychannel", "html", {"chat_id": "@mychannel", "text": "t", "parse_mode": "HTML"}),
    ],
)
def test_payload_keeps_the_chat_id_kind_and_parse_mode(
    to: str, fmt: Any, expected: dict[str, Any]
) -> None:
    message = OutgoingChat(job_id="j", to=to, text="t", format=fmt)
    assert TelegramProvider.build_payload(message) == expected


async def test_get_me_checks_the_token_and_a_401_is_invalid_credentials() -> None:
    requests: list[httpx.Request] = []
    await bot(answer(200, ok=True, result={"id": 1, "is_bot": True}), requests).check_credentials()
    assert [(r.method, str(r.url)) for r in requests] == [
        ("GET", f"https://api.telegram.org/bot{TOKEN}/getMe")
    ]
    with pytest.raises(InvalidCredentials) as raised:
        await bot(failed(401, "Unauthorized"), []).check_credentials()
    assert TOKEN not in str(raised.value)


@pytest.mark.parametrize(
    ("handler", "failure_class"),
    [
        (failed(400, "Bad Request: chat not found"), FailureClass.MESSAGE_PERMANENT),
        (failed(400, "Bad Request: message is too long"), FailureClass.MESSAGE_PERMANENT),
        (failed(401, "Unauthorized"), FailureClass.PROVIDER_PERMANENT),
        (failed(404, "Not Found"), FailureClass.PROVIDER_PERMANENT),
        (failed(500, "Internal Server Error"), FailureClass.TRANSIENT),
        (failed(502, "Bad Gateway"), FailureClass.TRANSIENT),
        (failed(429, "Too Many Requests: retry after 5", retry_after=5), FailureClass.THROTTLED),
    ],
)
async def test_classification_table(handler: Handler, failure_class: FailureClass) -> None:
    assert (await failure_of(handler)).failure_class is failure_class


async def test_a_429_defers_by_parameters_retry_after() -> None:
    failure = await failure_of(failed(429, "Too Many Requests: retry after 5", retry_after=5))
    assert failure.retry_after == 5.0


@pytest.mark.parametrize(
    "description",
    [
        "Forbidden: bot was blocked by the user",
        "Forbidden: bot can't initiate conversation with a user",
        "Forbidden: bot was kicked from the group chat",
    ],
)
async def test_a_403_is_a_blocked_recipient(description: str) -> None:
    failure = await failure_of(failed(403, description))
    assert isinstance(failure, RecipientBlocked)
    assert failure.failure_class is FailureClass.MESSAGE_PERMANENT


async def test_a_migrated_group_is_followed_once_to_the_supergroup() -> None:
    requests: list[httpx.Request] = []
    replies = iter(
        [
            failed(400, "Bad Request: group chat was upgraded", migrate_to_chat_id=-100999),
            answer(200, ok=True, result={"message_id": 7}),
        ]
    )
    result = await bot(lambda r: next(replies)(r), requests).send(MESSAGE)
    assert [json.loads(r.content)["chat_id"] for r in requests] == [-1001234, -100999]
    assert result.response_excerpt == "migrated to chat -100999"


async def test_a_migration_is_followed_only_once() -> None:
    requests: list[httpx.Request] = []
    again = failed(400, "Bad Request: group chat was upgraded", migrate_to_chat_id=-100999)
    with pytest.raises(ProviderFailure) as raised:
        await bot(again, requests).send(MESSAGE)
    assert len(requests) == 2
    assert raised.value.failure_class is FailureClass.MESSAGE_PERMANENT


@pytest.mark.parametrize(
    "token",
    ["", "no-colon", "123:short", "123:AAAAAAAAAAAAAAAAAAAAAAAA/../getMe", "1:" + "A" * 200],
)
def test_a_token_not_of_telegrams_form_is_refused(token: str) -> None:
    with pytest.raises(InvalidCredentials) as raised:
        TelegramProvider({"bot_token": token}, {}, httpx.AsyncClient())
    assert "/getMe" not in str(raised.value)


def test_repr_shows_no_token() -> None:
    assert TOKEN not in repr(bot(answer(200), []))
    assert TOKEN.split(":")[1] not in repr(bot(answer(200), []))


async def test_a_token_echoed_in_the_description_is_redacted() -> None:
    failure = await failure_of(failed(400, f"Bad Request: token {TOKEN} is odd"))
    assert TOKEN not in failure.detail and TOKEN not in repr(failure)
    assert "***" in failure.detail


async def test_a_transport_error_quoting_the_url_leaks_no_token() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"cannot reach {request.url}", request=request)

    failure = await failure_of(refuse)
    assert failure.failure_class is FailureClass.TRANSIENT
    assert TOKEN not in failure.detail and TOKEN.split(":")[1] not in repr(failure)


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [(10**12, MAX_RETRY_AFTER), (-5, 0.0), ("soon", None), (True, None), (float("nan"), None)],
)
async def test_a_bogus_retry_after_is_bounded(retry_after: Any, expected: float | None) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = {"ok": False, "error_code": 429, "description": "Too Many Requests"}
        body["parameters"] = {"retry_after": retry_after}
        return httpx.Response(429, content=json.dumps(body).replace("NaN", "NaN"))

    failure = await failure_of(handler)
    assert failure.failure_class is FailureClass.THROTTLED
    assert failure.retry_after == expected


async def test_a_huge_answer_gives_a_short_detail() -> None:
    failure = await failure_of(failed(400, "Bad Request: " + "x" * 1_000_000))
    assert len(failure.detail) <= 300
