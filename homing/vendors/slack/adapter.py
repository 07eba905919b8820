"""Slack incoming webhooks: ``POST <webhook_url>`` with ``{"text"}`` → 200 ``ok``.

The webhook URL is the credential: it is sealed at rest, masked in answers, checked by
the endpoint guard (``hooks.slack.com``, or an operator's sandbox or allowed network)
and never quoted in a detail. Errors are plain-text codes (Slack's 2016 changelog for
incoming webhooks); a code decides before the status does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

import httpx

from homing.errors import InvalidCredentials
from homing.models import FailureClass
from homing.providers.base import ProviderFailure, SendResult
from homing.providers.chat_base import OutgoingChat, bounded_wait
from homing.providers.http import USER_AGENT, classify_status, redact, send_request

MESSAGE_PERMANENT = FailureClass.MESSAGE_PERMANENT
PROVIDER_PERMANENT = FailureClass.PROVIDER_PERMANENT

# Codes Slack answers in the body, and what each means for Homing.
CODE_CLASSES: Final[Mapping[str, FailureClass]] = {
    "invalid_payload": MESSAGE_PERMANENT,
    "missing_text_or_fallback_or_attachments": MESSAGE_PERMANENT,
    "no_text": MESSAGE_PERMANENT,
    "too_many_attachments": MESSAGE_PERMANENT,
    "user_not_found": PROVIDER_PERMANENT,
    "action_prohibited": PROVIDER_PERMANENT,
    "channel_not_found": PROVIDER_PERMANENT,
    "channel_is_archived": PROVIDER_PERMANENT,
    "no_service": PROVIDER_PERMANENT,
    "no_service_id": PROVIDER_PERMANENT,
    "no_team": PROVIDER_PERMANENT,
    "team_disabled": PROVIDER_PERMANENT,
    "invalid_token": PROVIDER_PERMANENT,
    "posting_to_general_channel_denied": PROVIDER_PERMANENT,
    "rate_limited": FailureClass.THROTTLED,
    "rollup_error": FailureClass.TRANSIENT,
}
STATUS_CLASSES: Final[Mapping[int, FailureClass]] = {
    400: MESSAGE_PERMANENT,
    403: PROVIDER_PERMANENT,
    404: PROVIDER_PERMANENT,
    410: PROVIDER_PERMANENT,
    429: FailureClass.THROTTLED,
}
# What a live webhook answers to an empty post: it exists, the message was empty.
ALIVE_CODES: Final = frozenset(
    {"no_text", "missing_text_or_fallback_or_attachments", "invalid_payload"}
)
_MAX_CODE: Final = 64
_CODE_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz_")


def error_code(response: httpx.Response) -> str:
    """The plain-text error code of the body, or ``""`` when it is anything else."""
    text = response.content[: _MAX_CODE + 2].decode("ascii", "replace").strip()
    if 0 < len(text) <= _MAX_CODE and set(text) <= _CODE_CHARS:
        return text
    return ""


def classify(response: httpx.Response) -> FailureClass:
    """The failure class of an error answer: its code, else its status."""
    code = error_code(response)
    if code in CODE_CLASSES:
        return CODE_CLASSES[code]
    return classify_status(response.status_code, STATUS_CLASSES)


class SlackProvider:
    """One Slack incoming webhook (one channel of one workspace)."""

    name: ClassVar[str] = "slack"
    supports_idempotency: ClassVar[bool] = False

    def __init__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> None:
        url = credentials.get("webhook_url")
        if not isinstance(url, str) or not url.isascii() or not url.isprintable():
            raise InvalidCredentials("slack credentials need a 'webhook_url'")
        self._url = url
        self._http = http

    def __repr__(self) -> str:
        return "SlackProvider(webhook_url=***)"

    @staticmethod
    def build_payload(message: OutgoingChat) -> dict[str, Any]:
        """The webhook's JSON body: the text, with Slack's mrkdwn unless ``plain``."""
        if message.format == "html":
            raise ProviderFailure(MESSAGE_PERMANENT, "slack: messages cannot be html")
        return {"text": message.text, "mrkdwn": message.format == "markdown"}

    async def send(self, message: OutgoingChat) -> SendResult:
        """Post one message; anything but 2xx is a classified failure."""
        response = await self._post(self.build_payload(message))
        if not response.is_success:
            raise self._failure(response)
        return SendResult(None, response.status_code)

    async def check_credentials(self) -> None:
        """Post an empty message: a live webhook refuses it for want of text (400
        ``no_text``), a dead one says it is gone (403, 404, 410)."""
        response = await self._post({})
        if response.is_success or error_code(response) in ALIVE_CODES:
            return
        failure = self._failure(response)
        if failure.failure_class is PROVIDER_PERMANENT:
            raise InvalidCredentials(f"Slack refused the webhook URL ({failure.detail})")
        raise failure

    async def _post(self, payload: dict[str, Any]) -> httpx.Response:
        return await send_request(
            self._http,
            self.name,
            "POST",
            self._url,
            headers={"User-Agent": USER_AGENT},
            json=payload,
        )

    def _failure(self, response: httpx.Response) -> ProviderFailure:
        code = error_code(response)
        status = response.status_code
        detail = redact(f"slack: HTTP {status}" + (f": {code}" if code else ""), [self._url])
        failure_class = classify(response)
        retry_after = None
        if failure_class is FailureClass.THROTTLED:
            retry_after = bounded_wait(response.headers.get("retry-after"))
        return ProviderFailure(failure_class, detail, status_code=status, retry_after=retry_after)
