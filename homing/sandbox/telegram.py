"""Telegram's Bot API as the sandbox speaks it: ``/bot<token>/sendMessage`` and ``getMe``.

Like the Bot API (core.telegram.org/bots/api#making-requests) both take GET or POST
and their parameters in any of four ways: the URL's query string,
``application/x-www-form-urlencoded``, ``application/json`` or ``multipart/form-data``.
Answers are ``{"ok": true, "result": …}`` (for ``sendMessage`` the sent ``Message``:
``message_id``, ``from``, ``date``, ``chat`` with its ``type``, ``text``) or ``{"ok":
false, "error_code", "description", "parameters"?}``. A token not of the form
``<digits>:<secret>`` is 404 ``Not Found``; one containing ``invalid`` is 401
``Unauthorized``. Chat ids steer the failure classes: one starting ``403`` has
blocked the bot (403), ``400`` was never found (400 ``chat not found``), ``-555…`` is
a group that became the supergroup ``-100555…`` (400 with
``parameters.migrate_to_chat_id``). Telegram's rules are enforced
(``homing.sandbox.chat_rules``): over one, 429 with ``parameters.retry_after``.
"""

from __future__ import annotations

import json
import math
import re
import time
import zlib
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router

from homing.sandbox.chat_rules import TELEGRAM_BOT, TELEGRAM_CHAT, TELEGRAM_GROUP
from homing.sandbox.faults import guarded, status_phrase
from homing.sandbox.form_bodies import is_form, read_form
from homing.sandbox.state import FaultScope, RecordedMessage, SandboxState

PROVIDER: Final = "telegram"
MAX_TEXT: Final = 4096
_TOKEN: Final = re.compile(r"([0-9]{1,20}):[A-Za-z0-9_-]{20,128}")
_CHAT: Final = re.compile(r"-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31}")
_DESCRIPTIONS: Final = {
    400: "Bad Request: chat not found",
    401: "Unauthorized",
    403: "Forbidden: bot was blocked by the user",
    404: "Not Found",
    429: "Too Many Requests: retry after 1",
    500: "Internal Server Error",
    502: "Bad Gateway",
}


def error(status: int, description: str, parameters: dict[str, Any] | None = None) -> JSONResponse:
    """Telegram's error body."""
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if parameters:
        body["parameters"] = parameters
    return JSONResponse(body, status_code=status)


def too_many(retry_after: float | None) -> JSONResponse:
    """A 429 as Telegram answers it: the wait in the text and in ``parameters``."""
    wait = max(1, math.ceil(retry_after or 1))
    return error(429, f"Too Many Requests: retry after {wait}", {"retry_after": wait})


def fault_response(status: int, retry_after: float | None) -> JSONResponse:
    """The reply Telegram gives for ``status`` (fault injection)."""
    if status == 429:
        return too_many(retry_after)
    return error(status, _DESCRIPTIONS.get(status, status_phrase(status)))


def _bot(request: Request) -> str | Response:
    token = request.path_params["token"]
    match = _TOKEN.fullmatch(token)
    if match is None:
        return error(404, "Not Found")
    if "invalid" in token:
        return error(401, "Unauthorized")
    return match.group(1)


async def _payload(request: Request) -> dict[str, Any] | None:
    """The method's parameters: the query string's, then the body's (a form, or JSON
    whatever its content type, as Homing's own client sends); None for a body that is
    neither a form nor a JSON object."""
    parameters: dict[str, Any] = dict(request.query_params)
    if is_form(request):
        return {**parameters, **dict(await read_form(request))}
    body = await request.body()
    if not body.strip():
        return parameters
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    return {**parameters, **payload} if isinstance(payload, dict) else None


def _steered(chat: str) -> Response | None:
    """The failure a chat id asks for (see the module docstring)."""
    if chat.startswith("403"):
        return error(403, "Forbidden: bot was blocked by the user")
    if chat.startswith("400"):
        return error(400, "Bad Request: chat not found")
    if chat.startswith("-555"):
        description = "Bad Request: group chat was upgraded to a supergroup chat"
        return error(400, description, {"migrate_to_chat_id": int("-100" + chat[1:])})
    return None


def _rules(bot: str, chat: str) -> list[tuple[tuple[str, int, float], str]]:
    per_chat = TELEGRAM_GROUP if chat.startswith(("-", "@")) else TELEGRAM_CHAT
    return [(TELEGRAM_BOT, bot), (per_chat, f"{bot}/{chat}")]


async def send_message(state: SandboxState, request: Request) -> Response:
    """``sendMessage``: check the token, the body and the rules, record, answer."""
    bot = _bot(request)
    if isinstance(bot, Response):
        return bot
    payload = await _payload(request)
    if payload is None:
        return error(400, "Bad Request: invalid JSON")
    chat, text = str(payload.get("chat_id", "")), payload.get("text")
    if not _CHAT.fullmatch(chat):
        return error(400, "Bad Request: chat not found")
    if not isinstance(text, str) or not text.strip():
        return error(400, "Bad Request: message text is empty")
    if len(text) > MAX_TEXT:
        return error(400, "Bad Request: message is too long")
    if (steered := _steered(chat)) is not None:
        return steered
    refusal = state.chat_rules.take(PROVIDER, _rules(bot, chat))
    if refusal is not None:
        return too_many(refusal.retry_after)
    return _sent(state, bot, chat, text, payload.get("parse_mode"))


def _sent(state: SandboxState, bot: str, chat: str, text: str, mode: Any) -> JSONResponse:
    """Record the message and answer it as the ``Message`` Telegram sent."""
    message_id = state.next_message_number()
    state.recorder.record(
        RecordedMessage(
            provider=PROVIDER,
            to=(chat,),
            sender=bot,
            subject=mode,
            text=text,
            html=None,
            message_id=str(message_id),
        )
    )
    result = {
        "message_id": message_id,
        "from": bot_user(bot),
        "date": int(time.time()),
        "chat": _chat(chat),
        "text": text,
    }
    return JSONResponse({"ok": True, "result": result})


def _chat(chat: str) -> dict[str, Any]:
    """The ``Chat`` a message went to: its integer id and its ``type``, which the Bot
    API always sends (``private`` for a person, ``group``, ``supergroup`` for
    ``-100…``, ``channel`` for an ``@username``)."""
    if chat.startswith("@"):
        # A channel answers with its numeric id; the sandbox makes a stable one.
        number = zlib.crc32(chat.lower().encode())
        name = chat[1:]
        return {
            "id": -1_000_000_000_000 - number,
            "type": "channel",
            "title": name,
            "username": name,
        }
    if not chat.startswith("-"):
        return {"id": int(chat), "type": "private", "first_name": "Sandbox"}
    kind = "supergroup" if chat.startswith("-100") else "group"
    return {"id": int(chat), "type": kind, "title": f"Sandbox {kind}"}


async def get_me(request: Request) -> Response:
    """``getMe``: the bot as a ``User``."""
    bot = _bot(request)
    if isinstance(bot, Response):
        return bot
    return JSONResponse({"ok": True, "result": bot_user(bot)})


def bot_user(bot: str) -> dict[str, Any]:
    """The bot as a ``User``."""
    return {
        "id": int(bot),
        "is_bot": True,
        "first_name": "Sandbox",
        "username": f"sandbox{bot}_bot",
    }


def router(state: SandboxState) -> Router:
    """The Telegram routes, to mount under ``/telegram``."""

    async def send_endpoint(request: Request) -> Response:
        return await send_message(state, request)

    return Router(
        routes=[
            Route(
                "/bot{token}/sendMessage",
                guarded(state, PROVIDER, FaultScope.SEND, fault_response, send_endpoint),
                methods=["GET", "POST"],
            ),
            Route(
                "/bot{token}/getMe",
                guarded(state, PROVIDER, FaultScope.CHECK, fault_response, get_me),
                methods=["GET", "POST"],
            ),
        ]
    )
