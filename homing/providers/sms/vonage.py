"""Vonage Messages API: ``POST /v1/messages`` with ``"channel": "sms"``.

JSON, HTTP Basic ``api_key:api_secret``; success is 202 ``{"message_uuid"}``. Numbers
go without their ``+``. Errors are RFC 7807 problem documents (``type``, ``title``,
``detail``): 401 bad credentials, 402 no credit, 422 invalid parameters, 429
throttled. The job id travels as ``client_ref`` and comes back on status webhooks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

import httpx

from homing.errors import InvalidCredentials
from homing.models import FailureClass
from homing.providers.base import OutgoingSms, ProviderFailure, SendResult
from homing.providers.http import (
    USER_AGENT,
    classify_status,
    json_body,
    parse_retry_after,
    require_credential,
    response_detail,
    send_request,
    status_detail,
)

TRANSIENT = FailureClass.TRANSIENT
THROTTLED = FailureClass.THROTTLED
PROVIDER_PERMANENT = FailureClass.PROVIDER_PERMANENT
MESSAGE_PERMANENT = FailureClass.MESSAGE_PERMANENT

DEFAULT_BASE_URL: Final = "https://api.nexmo.com"
STATUS_CLASSES: Final[Mapping[int, FailureClass]] = {
    400: MESSAGE_PERMANENT,
    401: PROVIDER_PERMANENT,
    402: PROVIDER_PERMANENT,  # the account is out of credit
    403: PROVIDER_PERMANENT,
    422: MESSAGE_PERMANENT,
    429: THROTTLED,
}
_MAX_UUID: Final = 64
_UUID_CHARS: Final = frozenset("0123456789abcdefABCDEF-")


def classify(response: httpx.Response) -> FailureClass:
    """By the HTTP status: Vonage's problem ``type`` URLs name no finer class."""
    return classify_status(response.status_code, STATUS_CLASSES)


def message_uuid(body: Any) -> str | None:
    """The ``message_uuid`` of an accepted message, when it looks like one."""
    value = body.get("message_uuid") if isinstance(body, dict) else None
    if isinstance(value, str) and 0 < len(value) <= _MAX_UUID and set(value) <= _UUID_CHARS:
        return value
    return None


def _problem_detail(response: httpx.Response, secrets: list[str]) -> str:
    body = json_body(response)
    if isinstance(body, dict) and isinstance(body.get("title"), str):
        words = " ".join(str(body.get(k)) for k in ("title", "detail") if body.get(k))
        return response_detail(
            httpx.Response(response.status_code, json={"message": words}), secrets=secrets
        )
    return response_detail(response, secrets=secrets)


class VonageProvider:
    """Vonage over the Messages API; the sender is the job's ``from``, else the
    account's ``config.from``."""

    name: ClassVar[str] = "vonage"
    supports_idempotency: ClassVar[bool] = False

    def __init__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> None:
        self._key = require_credential(credentials, "api_key", "Vonage")
        self._secret = require_credential(credentials, "api_secret", "Vonage")
        self._base_url = str(config.get("base_url") or DEFAULT_BASE_URL).rstrip("/")
        self._from = config.get("from")
        self._http = http

    def __repr__(self) -> str:
        return f"VonageProvider(base_url={self._base_url!r})"

    def _headers(self) -> dict[str, str]:
        return {"Accept": "application/json", "User-Agent": USER_AGENT}

    def build_payload(self, sms: OutgoingSms) -> dict[str, Any]:
        """The ``POST /v1/messages`` JSON body for ``sms``."""
        content = sms.content
        sender = content.from_ or self._from
        if not isinstance(sender, str) or not sender:
            raise ProviderFailure(
                PROVIDER_PERMANENT,
                "vonage: no sender: give 'from' on the message or config.from on the provider",
            )
        return {
            "message_type": "text",
            "channel": "sms",
            "to": content.to.removeprefix("+"),
            "from": sender.removeprefix("+"),
            "text": content.body,
            "client_ref": sms.job_id,
        }

    async def send(self, sms: OutgoingSms) -> SendResult:
        """Submit the message; 202 with its ``message_uuid`` is success."""
        response = await send_request(
            self._http,
            self.name,
            "POST",
            f"{self._base_url}/v1/messages",
            headers=self._headers(),
            json=self.build_payload(sms),
            auth=(self._key, self._secret),
        )
        if not response.is_success:
            raise self._failure(response)
        return SendResult(message_uuid(json_body(response)), response.status_code)

    async def check_credentials(self) -> None:
        """``GET /v2/applications`` (the Application API takes the same Basic auth):
        401 means the key and secret are rejected."""
        response = await send_request(
            self._http,
            self.name,
            "GET",
            f"{self._base_url}/v2/applications",
            headers=self._headers(),
            params={"page_size": "1"},
            auth=(self._key, self._secret),
        )
        if response.status_code in (401, 403):
            raise InvalidCredentials(f"Vonage rejected the credentials ({status_detail(response)})")
        if not response.is_success:
            raise self._failure(response)

    def _failure(self, response: httpx.Response) -> ProviderFailure:
        failure_class = classify(response)
        retry_after = None
        if failure_class is THROTTLED:
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
        return ProviderFailure(
            failure_class,
            f"vonage: {_problem_detail(response, [self._secret])}",
            status_code=response.status_code,
            retry_after=retry_after,
        )
