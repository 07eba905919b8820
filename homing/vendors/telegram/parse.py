"""Telegram's updates to a bot's webhook: who blocked the bot, who said /stop.

One update per post, identified by ``update_id`` (a replay is a repeat). The bot's own
membership changes (``my_chat_member``) are the channel's opt-out: ``kicked`` (a user
blocked the bot, or a group banned it) or ``left`` in a group suppresses the chat for
the tenant's chat jobs (``telegram:<chat id>``), ``member`` or ``administrator`` lifts
it. A ``message`` whose text is the command ``/stop`` suppresses its chat, ``/start``
lifts it. Every other update is journaled as history and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homing.channels import Channel
from homing.inbound.events import DeliveryEvent, EventError, EventType, RawEvent
from homing.inbound.parsing import epoch, load_json, mapping, text, unreadable
from homing.store.suppressions import chat_recipient

# Updates are a few KB; a body past this is refused before it is parsed.
MAX_BODY_BYTES: Final = 65_536
PROVIDER: Final = "telegram"
# Telegram's ids fit in 52 bits (chat ids of supergroups carry a -100 prefix).
MAX_ID: Final = 10**15 - 1
_MAX_COMMAND: Final = 64
GROUPS: Final = frozenset({"group", "supergroup", "channel"})
LIFTING: Final = frozenset({"member", "administrator"})
COMMANDS: Final = {"/stop": True, "/start": False}


def _integer(value: Any, what: str, bound: int = MAX_ID) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > bound:
        raise EventError(f"{what} is not an integer Telegram sends")
    return value


def split(body: bytes, headers: Mapping[str, str]) -> list[RawEvent]:
    """The one update of the body, keyed by its ``update_id``."""
    try:
        update = load_json(body)
        update_id = _integer(mapping(update, "the update").get("update_id"), "update_id")
    except EventError as exc:
        return [unreadable(body, str(exc))]
    return [RawEvent.of(str(update_id), update)]


def command(value: Any) -> str:
    """The bot command a message's text is (``/stop``, ``/stop@bot``, ``/start x``), else ""."""
    if not isinstance(value, str) or len(value) > _MAX_COMMAND:
        return ""
    word = value.strip().split(" ", 1)[0]
    return word.split("@", 1)[0].lower()


def _chat(part: dict[str, Any]) -> tuple[str, str]:
    """The suppression key of the update's chat and the chat's type."""
    chat = mapping(part.get("chat"), "the chat")
    chat_id = _integer(chat.get("id"), "the chat id")
    kind = text(chat.get("type")) or ""
    return chat_recipient(PROVIDER, str(chat_id)), kind[:20]


def _opt(
    vendor_type: str, part: dict[str, Any], opt_out: bool | None, status: str
) -> DeliveryEvent:
    recipient, kind = _chat(part)
    detail = {"chat_type": kind, "status": status[:40]}
    occurred = epoch(part.get("date"))
    if opt_out is None:
        return DeliveryEvent(
            type=EventType.OTHER,
            vendor_type=vendor_type,
            occurred_at=occurred,
            detail=detail,
            channel=Channel.CHAT,
        )
    return DeliveryEvent(
        type=EventType.UNSUBSCRIBED if opt_out else EventType.INFO,
        vendor_type=vendor_type,
        occurred_at=occurred,
        address=recipient,
        detail=detail,
        channel=Channel.CHAT,
        opt_out=opt_out,
    )


def _membership(part: dict[str, Any]) -> DeliveryEvent:
    member = mapping(part.get("new_chat_member"), "new_chat_member")
    status = text(member.get("status")) or ""
    _, kind = _chat(part)
    opt_out: bool | None = None
    if status == "kicked" or (status == "left" and kind in GROUPS):
        opt_out = True
    elif status in LIFTING:
        opt_out = False
    return _opt(f"my_chat_member {status[:40]}", part, opt_out, status)


def _message(part: dict[str, Any]) -> DeliveryEvent:
    word = command(part.get("text"))
    opt_out = COMMANDS.get(word)
    vendor_type = f"message {word}" if opt_out is not None else "message"
    return _opt(vendor_type, part, opt_out, word if opt_out is not None else "")


def interpret(payload: Any) -> DeliveryEvent:
    """One Telegram update in Homing's terms."""
    update = mapping(payload, "the update")
    if "my_chat_member" in update:
        return _membership(mapping(update["my_chat_member"], "my_chat_member"))
    if "message" in update:
        return _message(mapping(update["message"], "the message"))
    kinds = sorted(key for key in update if key != "update_id")
    vendor_type = (kinds[0] if kinds else "update")[:40]
    return DeliveryEvent(
        type=EventType.OTHER, vendor_type=vendor_type, occurred_at=None, channel=Channel.CHAT
    )
