"""Telegram's secret-token check and what each update means (pure functions)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from homing.inbound.events import EventError, EventType
from homing.inbound.verification import VerificationFailed
from homing.vendors.telegram import parse
from homing.vendors.telegram.verify import check_token, verify

TOKEN = "Secret_token-0123456789abcdefABCDEF"


def test_the_header_must_carry_the_token_exactly() -> None:
    verify(TOKEN, {"X-Telegram-Bot-Api-Secret-Token": TOKEN})
    verify(TOKEN, {"x-telegram-bot-api-secret-token": TOKEN})
    for given in ("", TOKEN[:-1], TOKEN + "x", TOKEN.lower(), f" {TOKEN}", "é" * 10):
        with pytest.raises(VerificationFailed):
            verify(TOKEN, {"X-Telegram-Bot-Api-Secret-Token": given})
    with pytest.raises(VerificationFailed):
        verify(TOKEN, {})


@pytest.mark.parametrize("token", ["a", "A-z_0", "x" * 256])
def test_tokens_telegram_accepts_are_accepted(token: str) -> None:
    assert check_token(token) == token


@pytest.mark.parametrize("token", ["", "x" * 257, "has space", "tok€n", "a/b", "a\nb", 42, None])
def test_tokens_telegram_refuses_are_refused(token: Any) -> None:
    with pytest.raises(ValueError):
        check_token(token)


def _member(status: str, chat_id: int = 4242, kind: str = "private") -> dict[str, Any]:
    return {
        "update_id": 7,
        "my_chat_member": {
            "chat": {"id": chat_id, "type": kind},
            "date": 1_700_000_000,
            "new_chat_member": {"status": status},
        },
    }


def _message(text: str, chat_id: int = 4242) -> dict[str, Any]:
    chat = {"id": chat_id, "type": "private"}
    return {"update_id": 8, "message": {"chat": chat, "date": 1_700_000_000, "text": text}}


@pytest.mark.parametrize(
    ("update", "opt_out"),
    [
        (_member("kicked"), True),
        (_member("kicked", -1001234, "supergroup"), True),
        (_member("left", -1001234, "supergroup"), True),
        (_member("left", -42, "group"), True),
        (_member("member"), False),
        (_member("administrator", -1001234, "channel"), False),
        (_message("/stop"), True),
        (_message(" /STOP@sandbox_bot "), True),
        (_message("/start"), False),
        (_message("/start deep-link-payload"), False),
    ],
)
def test_membership_and_commands_suppress_or_lift_the_chat(
    update: dict[str, Any], opt_out: bool
) -> None:
    event = parse.interpret(update)
    assert event.opt_out is opt_out
    assert event.type is (EventType.UNSUBSCRIBED if opt_out else EventType.INFO)
    part = update.get("my_chat_member") or update["message"]
    assert event.address == f"telegram:{part['chat']['id']}"
    assert event.channel.value == "chat"


@pytest.mark.parametrize(
    "update",
    [
        _member("left"),  # leaving a private chat is not something a user does
        _member("restricted", -1001234, "supergroup"),
        _member("creator"),
        _message("hello"),
        _message("/stopwatch"),
        _message("/stop" + " " * 100),  # longer than any command
        {"update_id": 9, "callback_query": {"id": "1", "data": "x"}},
        {"update_id": 10},
    ],
)
def test_everything_else_is_history(update: dict[str, Any]) -> None:
    event = parse.interpret(update)
    assert (event.type, event.opt_out, event.address) == (EventType.OTHER, None, None)


def test_the_update_id_is_the_event_id() -> None:
    [raw] = parse.split(json.dumps(_member("kicked")).encode(), {})
    assert (raw.event_id, raw.error) == ("7", None)
    [unreadable] = parse.split(b"not json", {})
    assert unreadable.error is not None and unreadable.event_id.startswith("body:")
    [no_id] = parse.split(json.dumps({"update_id": "7"}).encode(), {})
    assert no_id.error is not None


@pytest.mark.parametrize("chat_id", ["4242", 4242.0, True, 10**20, None, [4242]])
def test_a_chat_id_that_is_no_integer_is_an_error(chat_id: Any) -> None:
    update = _member("kicked")
    update["my_chat_member"]["chat"]["id"] = chat_id
    with pytest.raises(EventError):
        parse.interpret(update)
