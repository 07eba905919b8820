"""Telegram's webhook updates, as the sandbox posts them to a bot's webhook.

JSON ``Update`` objects with the header ``X-Telegram-Bot-Api-Secret-Token`` set to the
bot's ``secret_token`` (Telegram signs nothing). ``KINDS``: ``blocked`` (the user
blocked the bot: ``my_chat_member`` with ``kicked``; in a group, with negative chat
ids, the bot was removed: ``left``), ``unblocked`` (``member`` again), and the
commands ``stop`` and ``start``, a message ``/stop`` or ``/start`` from the chat.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any, Final

from homing.sandbox.state import RecordedMessage

KINDS: Final = ("blocked", "unblocked", "stop", "start")
HEADER: Final = "X-Telegram-Bot-Api-Secret-Token"


def _chat(message: RecordedMessage) -> dict[str, Any]:
    to = message.to[0] if message.to else ""
    chat_id: int | str = int(to) if to.lstrip("-").isdigit() else to
    group = isinstance(chat_id, int) and chat_id < 0
    chat: dict[str, Any] = {"id": chat_id, "type": "supergroup" if group else "private"}
    if group:
        chat["title"] = "Sandbox group"
    else:
        chat["first_name"] = "Sandbox"
    return chat


def update(message: RecordedMessage, kind: str) -> dict[str, Any]:
    """The Update Telegram posts for ``kind`` about the chat ``message`` went to."""
    chat = _chat(message)
    person = {"id": 7_000_001, "is_bot": False, "first_name": "Sandbox"}
    bot_id = int(message.sender) if message.sender.isdigit() else 1
    bot = {"id": bot_id, "is_bot": True, "first_name": "Sandbox", "username": "sandbox_bot"}
    now = int(time.time())
    document: dict[str, Any] = {"update_id": 100_000_000 + secrets.randbelow(900_000_000)}
    if kind in ("stop", "start"):
        command = f"/{kind}"
        document["message"] = {
            "message_id": secrets.randbelow(1_000_000),
            "from": person,
            "chat": chat,
            "date": now,
            "text": command,
            "entities": [{"type": "bot_command", "offset": 0, "length": len(command)}],
        }
        return document
    gone = "left" if chat["type"] != "private" else "kicked"
    old, new = ("member", gone) if kind == "blocked" else (gone, "member")
    document["my_chat_member"] = {
        "chat": chat,
        "from": person,
        "date": now,
        "old_chat_member": {"user": bot, "status": old},
        "new_chat_member": {"user": bot, "status": new},
    }
    return document


def callback(
    message: RecordedMessage, kind: str, secret_token: str
) -> tuple[bytes, dict[str, str]]:
    """The JSON body and the header Telegram posts to the webhook."""
    return json.dumps(update(message, kind)).encode(), {HEADER: secret_token}
