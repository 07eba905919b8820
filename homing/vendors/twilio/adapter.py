"""Twilio Programmable Messaging: ``POST /2010-04-01/Accounts/{sid}/Messages.json``.

Form-encoded, HTTP Basic ``AccountSid:AuthToken``; success is 201 with the message's
``sid``. Errors are ``{"code", "message", "more_info", "status"}``. Twilio advises
against logic keyed on every code, so the HTTP status decides and the few codes below
override it (docs/architecture.md, "Failure classes").
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
from homing.vendors.twilio import VENDOR

DEFAULT_BASE_URL: Final = "https://api.twilio.com"
API_VERSION: Final = "2010-04-01"
STOPPED: Final = 21610  # the recipient replied STOP: refused until they send START
ERROR_CODE_CLASSES: Final[Mapping[int, FailureClass]] = {
    20003: PROVIDER_PERMANENT,  # authentication failed, or the account is suspended
    20429: THROTTLED,  # too many concurrent requests: never processed, safe to retry
    21211: MESSAGE_PERMANENT,  # invalid 'To' number
    21212: PROVIDER_PERMANENT,  # invalid 'From' number: the account's sender
    21606: PROVIDER_PERMANENT,  # 'From' is not an SMS-capable number of this account
    21608: PROVIDER_PERMANENT,  # a trial account sending to an unverified number
    21610: MESSAGE_PERMANENT,  # the recipient replied STOP (and is suppressed)
    21614: MESSAGE_PERMANENT,  # 'To' is not a mobile number
    21635: MESSAGE_PERMANENT,  # 'To' is a landline
}
STATUS_CLASSES: Final[Mapping[int, FailureClass]] = {
    400: MESSAGE_PERMANENT,
    401: PROVIDER_PERMANENT,
    403: PROVIDER_PERMANENT,
    404: PROVIDER_PERMANENT,
    429: THROTTLED,
}
# A sid is two letters and 32 hex digits; anything else from the answer is not kept.
_MAX_SID: Final = 64
_SID_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_INACTIVE: Final = frozenset({"suspended", "closed"})


def error_code(response: httpx.Response) -> int | None:
    """The ``code`` of a Twilio error body, when it is an integer."""
    body = json_body(response)
    code = body.get("code") if isinstance(body, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def classify(response: httpx.Response) -> FailureClass:
    """By the error code when the table knows it, else by the HTTP status."""
    code = error_code(response)
    if code is not None and code in ERROR_CODE_CLASSES:
        return ERROR_CODE_CLASSES[code]
    return classify_status(response.status_code, STATUS_CLASSES)


def message_sid(body: Any) -> str | None:
    """The ``sid`` of a created message, when it looks like one."""
    sid = body.get("sid") if isinstance(body, dict) else None
    if isinstance(sid, str) and 0 < len(sid) <= _MAX_SID and set(sid) <= _SID_CHARS:
        return sid
    return None


class TwilioProvider(HttpAdapter):
    """Twilio over its REST API; the sender is the job's ``from``, else the account's
    ``config.from`` or ``config.messaging_service_sid``."""

    name: ClassVar[str] = VENDOR.name
    supports_idempotency: ClassVar[bool] = False
    default_base_url: ClassVar[str] = DEFAULT_BASE_URL

    def __init__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> None:
        self._sid = require_credential(credentials, "account_sid", "Twilio")
        self._token = require_credential(credentials, "auth_token", "Twilio")
        super().__init__(http, self.base_url_of(config))
        self._from = config.get("from")
        self._service = config.get("messaging_service_sid")
        self._callback = config.get("status_callback")

    def _account_path(self) -> str:
        return f"/{API_VERSION}/Accounts/{self._sid}"

    def _auth(self) -> tuple[str, str]:
        return (self._sid, self._token)

    def _secrets(self) -> list[str]:
        return [self._token, self._sid]

    def build_form(self, sms: OutgoingSms) -> dict[str, str]:
        """The form fields of ``POST …/Messages.json`` for ``sms``."""
        content = sms.content
        form = {"To": content.to, "Body": content.body}
        sender = content.from_ or self._from
        if isinstance(sender, str) and sender:
            form["From"] = sender
        elif isinstance(self._service, str) and self._service:
            form["MessagingServiceSid"] = self._service
        else:
            raise ProviderFailure(
                PROVIDER_PERMANENT,
                "twilio: no sender: give 'from' on the message, or config.from or "
                "config.messaging_service_sid on the provider",
            )
        if isinstance(self._callback, str) and self._callback:
            form["StatusCallback"] = self._callback
        return form

    async def send(self, sms: OutgoingSms) -> SendResult:
        """Create the message; 201 with its ``sid`` is success."""
        path = f"{self._account_path()}/Messages.json"
        response = await self._call("POST", path, data=self.build_form(sms))
        return SendResult(message_sid(json_body(response)), response.status_code)

    async def check_credentials(self) -> None:
        """``GET /2010-04-01/Accounts/{sid}.json``: 401 or a suspended or closed
        account means the credentials cannot send."""
        response = await self._request("GET", f"{self._account_path()}.json")
        if response.status_code in (401, 403):
            raise InvalidCredentials(f"Twilio rejected the credentials ({status_detail(response)})")
        if not response.is_success:
            raise self._failure(response)
        body = json_body(response)
        status = body.get("status") if isinstance(body, dict) else None
        if status in _INACTIVE:
            raise InvalidCredentials(f"the Twilio account is {status}")

    def classify(self, response: httpx.Response) -> FailureClass:
        """The module's ``classify``: by error code when the table knows it, else status."""
        return classify(response)

    def _detail(self, response: httpx.Response, secrets: Sequence[str]) -> str:
        return _detail(response, error_code(response), list(secrets))

    def _suppress(self, response: httpx.Response) -> str | None:
        return "opted_out" if error_code(response) == STOPPED else None


def _detail(response: httpx.Response, code: int | None, secrets: list[str]) -> str:
    detail = response_detail(response, secrets=secrets)
    return detail if code is None else f"{detail} (code {code})"
