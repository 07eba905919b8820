"""Telegram Bot API: ``POST /bot<token>/sendMessage`` → ``{"ok": true, "result": {…}}``.

The bot token sits in the URL path, so it is a secret of the URL itself: no detail,
repr or error built here quotes the URL, and the vendor's own words are redacted of it.
Classification (docs/architecture.md, "Failure classes"): 429 throttled after
``parameters.retry_after``; 403 (blocked, kicked, never started) message_permanent and
the chat is suppressed; 400 with ``parameters.migrate_to_chat_id`` (a group became a
supergroup) is followed once; other 400s message_permanent; 401/404 (a bad token)
provider_permanent; 5xx transient.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import httpx

from homing.errors import InvalidCredentials
from homing.models import FailureClass
from homing.providers.base import ProviderFailure, SendResult
from homing.providers.chat_base import OutgoingChat, RecipientBlocked, bounded_wait
from homing.providers.http import (
    MAX_DETAIL,
    USER_AGENT,
    classify_status,
    json_body,
    redact,
    send_request,
)

DEFAULT_BASE_URL: Final = "https://api.telegram.org"
# "123456789:AA…": the bot id, a colon, then the secret part. Anything else could bend
# the path it is put in.
TOKEN: Final = re.compile(r"[0-9]{1,20}:[A-Za-z0-9_-]{20,128}")
PARSE_MODES: Final[Mapping[str, str]] = {"markdown": "MarkdownV2", "html": "HTML"}
STATUS_CLASSES: Final[Mapping[int, FailureClass]] = {
    400: FailureClass.MESSAGE_PERMANENT,
    401: FailureClass.PROVIDER_PERMANENT,
    403: FailureClass.MESSAGE_PERMANENT,
    404: FailureClass.PROVIDER_PERMANENT,
    429: FailureClass.THROTTLED,
}
_INTEGER: Final = re.compile(r"-?[0-9]{1,20}")


def chat_id(to: str) -> int | str:
    """A numeric chat id as the integer Telegram expects, an ``@channel`` as it is."""
    return int(to) if _INTEGER.fullmatch(to) else to


def _error(response: httpx.Response) -> tuple[str, dict[str, Any]]:
    body = json_body(response)
    if not isinstance(body, dict):
        return "", {}
    parameters = body.get("parameters")
    return str(body.get("description") or ""), parameters if isinstance(parameters, dict) else {}


def migrated_to(response: httpx.Response) -> int | None:
    """The supergroup id a 400 says the chat moved to, when it says so."""
    if response.status_code != 400:
        return None
    target = _error(response)[1].get("migrate_to_chat_id")
    if isinstance(target, bool) or not isinstance(target, int) or abs(target) >= 10**20:
        return None
    return target


class TelegramProvider:
    """A Telegram bot over the Bot API."""

    name: ClassVar[str] = "telegram"
    supports_idempotency: ClassVar[bool] = False

    def __init__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> None:
        token = credentials.get("bot_token")
        if not isinstance(token, str) or not TOKEN.fullmatch(token):
            raise InvalidCredentials(
                "telegram credentials need a 'bot_token' of the form <bot id>:<secret>"
            )
        self._token = token
        self._base_url = str(config.get("base_url") or DEFAULT_BASE_URL).rstrip("/")
        self._http = http

    def __repr__(self) -> str:
        return f"TelegramProvider(base_url={self._base_url!r})"

    def _url(self, method: str) -> str:
        return f"{self._base_url}/bot{self._token}/{method}"

    @staticmethod
    def build_payload(message: OutgoingChat, to: int | str | None = None) -> dict[str, Any]:
        """The ``sendMessage`` JSON body for ``message`` (to ``to`` after a migration)."""
        payload: dict[str, Any] = {
            "chat_id": chat_id(message.to) if to is None else to,
            "text": message.text,
        }
        if message.format in PARSE_MODES:
            payload["parse_mode"] = PARSE_MODES[message.format]
        return payload

    async def send(self, message: OutgoingChat) -> SendResult:
        """Send one message; a chat that moved to a supergroup is followed once."""
        response = await self._post(self.build_payload(message))
        target = migrated_to(response)
        if target is not None:
            response = await self._post(self.build_payload(message, target))
        if not response.is_success:
            raise self._failure(response)
        body = json_body(response)
        result = body.get("result") if isinstance(body, dict) else None
        message_id = result.get("message_id") if isinstance(result, dict) else None
        excerpt = f"migrated to chat {target}" if target is not None else None
        return SendResult(
            str(message_id) if isinstance(message_id, int) else None,
            response.status_code,
            excerpt,
        )

    async def check_credentials(self) -> None:
        """``getMe``: the Bot API's own check of a token."""
        response = await send_request(
            self._http, self.name, "GET", self._url("getMe"), headers={"User-Agent": USER_AGENT}
        )
        if response.is_success:
            return
        if response.status_code in (401, 403, 404):
            raise InvalidCredentials(
                f"Telegram rejected the bot token (HTTP {response.status_code})"
            )
        raise self._failure(response)

    async def _post(self, payload: dict[str, Any]) -> httpx.Response:
        return await send_request(
            self._http,
            self.name,
            "POST",
            self._url("sendMessage"),
            headers={"User-Agent": USER_AGENT},
            json=payload,
        )

    def _failure(self, response: httpx.Response) -> ProviderFailure:
        description, parameters = _error(response)
        status = response.status_code
        shown = " ".join(description[:MAX_DETAIL].split())
        detail = redact(f"telegram: HTTP {status}" + (f": {shown}" if shown else ""), [self._token])
        detail = detail[:MAX_DETAIL]
        if status == 403:
            return RecipientBlocked(detail, status_code=status)
        failure_class = classify_status(status, STATUS_CLASSES)
        retry_after = None
        if failure_class is FailureClass.THROTTLED:
            retry_after = bounded_wait(parameters.get("retry_after"))
            if retry_after is None:
                retry_after = bounded_wait(response.headers.get("retry-after"))
        return ProviderFailure(failure_class, detail, status_code=status, retry_after=retry_after)
