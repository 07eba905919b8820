"""Vonage Messages API: ``POST /v1/messages`` with ``"channel": "sms"``.

JSON, HTTP Basic ``api_key:api_secret``; success is 202 ``{"message_uuid"}``. Numbers
go without their ``+``. Errors are RFC 7807 problem documents (``type``, ``title``,
``detail``): 401 bad credentials, 402 no credit, 422 invalid parameters, 429
throttled. The job id travels as ``client_ref`` and comes back on status webhooks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

import httpx

from homing.errors import InvalidCredentials
from homing.models import FailureClass
from homing.providers.base import OutgoingSms, ProviderFailure, SendResult
from homing.providers.http import (
    classify_status,
    json_body,
    require_credential,
    response_detail,
    status_detail,
)
from homing.providers.http_adapter import (
    MESSAGE_PERMANENT,
    PROVIDER_PERMANENT,
    THROTTLED,
    HttpAdapter,
)
from homing.vendors.vonage import VENDOR

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


class VonageProvider(HttpAdapter):
    """Vonage over the Messages API; the sender is the job's ``from``, else the
    account's ``config.from``."""

    name: ClassVar[str] = VENDOR.name
    supports_idempotency: ClassVar[bool] = False
    default_base_url: ClassVar[str] = DEFAULT_BASE_URL

    def __init__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> None:
        self._key = require_credential(credentials, "api_key", "Vonage")
        self._secret = require_credential(credentials, "api_secret", "Vonage")
        super().__init__(http, self.base_url_of(config))
        self._from = config.get("from")

    def _auth(self) -> tuple[str, str]:
        return (self._key, self._secret)

    def _secrets(self) -> list[str]:
        return [self._secret]

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
        response = await self._call("POST", "/v1/messages", json=self.build_payload(sms))
        return SendResult(message_uuid(json_body(response)), response.status_code)

    async def check_credentials(self) -> None:
        """``GET /v2/applications`` (the Application API takes the same Basic auth):
        401 means the key and secret are rejected."""
        response = await self._request("GET", "/v2/applications", params={"page_size": "1"})
        if response.status_code in (401, 403):
            raise InvalidCredentials(f"Vonage rejected the credentials ({status_detail(response)})")
        if not response.is_success:
            raise self._failure(response)

    def classify(self, response: httpx.Response) -> FailureClass:
        """The module's ``classify``: by the HTTP status."""
        return classify(response)

    def _detail(self, response: httpx.Response, secrets: Sequence[str]) -> str:
        return _problem_detail(response, list(secrets))
