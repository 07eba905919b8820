"""Postmark: ``POST /email`` → 200 ``{"MessageID", "ErrorCode": 0}``; errors carry an ErrorCode.

``POST /email/batch`` takes up to 500 messages (50 MB in all) and answers 200 with one
``{ErrorCode, Message, MessageID, To}`` per message in the order sent: each item is
classified alone, by the same ErrorCode table as a single send.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

import httpx

from homing.errors import InvalidCredentials, InvalidRequest
from homing.models import DnsRecord, DomainInfo, DomainStatus, FailureClass
from homing.providers.base import (
    OutgoingEmail,
    ProviderFailure,
    SendResult,
    mailboxes,
    text,
)
from homing.providers.http import (
    USER_AGENT,
    classify_status,
    json_body,
    require_credential,
    status_detail,
)
from homing.providers.http_adapter import (
    MESSAGE_PERMANENT,
    PROVIDER_PERMANENT,
    THROTTLED,
    TRANSIENT,
    BatchOutcome,
    HttpAdapter,
    unreadable_batch,
)
from homing.vendors.postmark import VENDOR

# https://postmarkapp.com/developer/api/overview#error-codes. The body's ErrorCode is
# more precise than the status, so it decides whenever it is present and known; but
# ErrorCodes are numbers of their own, and some (413 "account may not send") share a
# number with an HTTP status that means something else.
ERROR_CODE_CLASSES: Final[Mapping[int, FailureClass]] = {
    10: PROVIDER_PERMANENT,  # bad or missing server token
    100: TRANSIENT,  # maintenance
    300: MESSAGE_PERMANENT,  # invalid email request
    400: MESSAGE_PERMANENT,  # sender signature not found
    401: MESSAGE_PERMANENT,  # sender signature not confirmed
    402: MESSAGE_PERMANENT,  # invalid JSON
    403: MESSAGE_PERMANENT,  # incompatible JSON
    405: PROVIDER_PERMANENT,  # not allowed to send (out of credits)
    406: MESSAGE_PERMANENT,  # inactive recipient (the message lists the addresses)
    409: MESSAGE_PERMANENT,  # JSON required
    410: MESSAGE_PERMANENT,  # too many batch messages
    411: MESSAGE_PERMANENT,  # forbidden attachment
    412: PROVIDER_PERMANENT,  # account pending
    413: PROVIDER_PERMANENT,  # account may not send
    429: THROTTLED,
}
STATUS_CLASSES: Final[Mapping[int, FailureClass]] = {
    401: PROVIDER_PERMANENT,
    # HTTP 413 "Payload Too Large": the request is over Postmark's 10 MB limit for the
    # Email API (developer/api/overview#http-response-codes). This message is too big
    # for any provider; the status decides, whatever code a body carries.
    413: MESSAGE_PERMANENT,
    422: MESSAGE_PERMANENT,
    429: THROTTLED,
    500: TRANSIENT,
    503: TRANSIENT,
}
BAD_TOKEN: Final = 10
PAYLOAD_TOO_LARGE: Final = 413
DEFAULT_BASE_URL: Final = "https://api.postmarkapp.com"
DEFAULT_STREAM: Final = "outbound"
BATCH_LIMIT: Final = 500
BATCH_BYTES: Final = 50 * 1024 * 1024


def _error_code(response: httpx.Response) -> int | None:
    body = json_body(response)
    code = body.get("ErrorCode") if isinstance(body, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def classify_item(code: int, status_code: int) -> FailureClass:
    """The failure class of one refused item of a batch answer: its ErrorCode by the
    single send's table; an unknown code by the call's status, else ``message_permanent``
    (the item was answered, and refused)."""
    if code in ERROR_CODE_CLASSES:
        return ERROR_CODE_CLASSES[code]
    return classify_status(status_code, STATUS_CLASSES) if status_code >= 400 else MESSAGE_PERMANENT


def classify(response: httpx.Response) -> FailureClass:
    """The failure class of a Postmark response: by ErrorCode when known, else by status."""
    if response.status_code == PAYLOAD_TOO_LARGE:
        return MESSAGE_PERMANENT
    code = _error_code(response)
    if code is not None and code in ERROR_CODE_CLASSES:
        return ERROR_CODE_CLASSES[code]
    return classify_status(response.status_code, STATUS_CLASSES)


def domain_info(body: Any) -> DomainInfo:
    """A Postmark domain: DKIM is a TXT record, new ones under ``DKIMPending*`` (with an
    empty ``DKIMHost``); the Return-Path is a CNAME to ``ReturnPathDomainCNAMEValue``."""
    body = body if isinstance(body, dict) else {}
    dkim_host = text(body.get("DKIMPendingHost")) or text(body.get("DKIMHost"))
    dkim_value = text(body.get("DKIMPendingTextValue")) or text(body.get("DKIMTextValue"))
    dkim_ok = body.get("DKIMVerified") is True
    records = [
        DnsRecord(type="TXT", host=dkim_host, value=dkim_value, purpose="dkim", valid=dkim_ok)
    ]
    return_path = text(body.get("ReturnPathDomain"))
    return_path_ok = body.get("ReturnPathDomainVerified") is True
    if return_path:
        value = text(body.get("ReturnPathDomainCNAMEValue"))
        records.append(
            DnsRecord(
                type="CNAME",
                host=return_path,
                value=value,
                purpose="return_path",
                valid=return_path_ok,
            )
        )
    verified = dkim_ok and (return_path_ok or not return_path)
    status = DomainStatus.VERIFIED if verified else DomainStatus.PENDING
    return DomainInfo(text(body.get("ID")), status, tuple(records))


class PostmarkProvider(HttpAdapter):
    """Postmark over HTTP with a server token; the job id travels in ``Metadata.hjid``.
    Postmark documents no rate-limit header: the base honours Retry-After if it appears."""

    name: ClassVar[str] = VENDOR.name
    supports_idempotency: ClassVar[bool] = False
    default_base_url: ClassVar[str] = DEFAULT_BASE_URL
    batch_limit: ClassVar[int] = BATCH_LIMIT
    batch_bytes: ClassVar[int] = BATCH_BYTES

    def __init__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> None:
        self._api_key = require_credential(credentials, "api_key", "Postmark")
        super().__init__(http, self.base_url_of(config))
        self._stream = str(config.get("message_stream") or DEFAULT_STREAM)
        # Domains need the Account token; the server token only sends.
        token = credentials.get("account_token")
        if isinstance(token, str) and token:
            token = require_credential(credentials, "account_token", "Postmark")
        self._account_token = token
        self._return_path = config.get("return_path_subdomain")

    def _headers(self) -> dict[str, str]:
        return {
            "X-Postmark-Server-Token": self._api_key,
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }

    def _secrets(self) -> list[str]:
        return [self._api_key]

    def build_payload(self, email: OutgoingEmail) -> dict[str, Any]:
        """The ``POST /email`` JSON body for ``email``."""
        content = email.content
        to, sender = mailboxes(content, "postmark")
        payload: dict[str, Any] = {
            "From": str(sender),
            "To": str(to),
            "Subject": content.subject,
            "Metadata": {"hjid": email.job_id},
            "MessageStream": self._stream,
        }
        if content.text is not None:
            payload["TextBody"] = content.text
        if content.html is not None:
            payload["HtmlBody"] = content.html
        if content.headers:
            payload["Headers"] = [{"Name": name, "Value": value} for name, value in content.headers]
        return payload

    async def send(self, email: OutgoingEmail) -> SendResult:
        """Submit ``email``; success needs both a 2xx and ``ErrorCode`` 0."""
        response = await self._request("POST", "/email", json=self.build_payload(email))
        if not response.is_success or _error_code(response) not in (0, None):
            raise self._failure(response)
        body = json_body(response)
        message_id = body.get("MessageID") if isinstance(body, dict) else None
        return SendResult(str(message_id) if message_id else None, response.status_code)

    async def send_batch(
        self, emails: Sequence[OutgoingEmail], idempotency_key: str | None = None
    ) -> list[BatchOutcome]:
        """Submit up to 500 messages in one ``POST /email/batch``; each item classified
        alone (Postmark has no idempotency key: ``idempotency_key`` is ignored)."""
        if not 1 <= len(emails) <= BATCH_LIMIT:
            raise ValueError(f"a Postmark batch carries 1 to {BATCH_LIMIT} messages")
        body = [self.build_payload(email) for email in emails]
        answer = await self._batch_call("/email/batch", body, self._headers())
        if isinstance(answer, list):
            return answer
        items = json_body(answer)
        if not isinstance(items, list) or len(items) != len(emails):
            return unreadable_batch(self.name, len(emails), "not one result per message")
        outcomes: list[BatchOutcome] = []
        for item in items:
            code = item.get("ErrorCode") if isinstance(item, dict) else None
            if not isinstance(code, int) or isinstance(code, bool):
                return unreadable_batch(self.name, len(emails), "an item without an ErrorCode")
            assert isinstance(item, dict)
            if code == 0:
                message_id = item.get("MessageID")
                outcomes.append(
                    SendResult(str(message_id) if message_id else None, answer.status_code)
                )
                continue
            words = self._item_words(item.get("Message"))
            failure_class = classify_item(code, answer.status_code)
            outcomes.append(
                ProviderFailure(
                    failure_class,
                    f"{self.name}: batch item ErrorCode {code}: {words}",
                    status_code=answer.status_code,
                )
            )
        return outcomes

    async def check_credentials(self) -> None:
        """Probe ``GET /server`` with the server token; 401 or ErrorCode 10 means rejected."""
        response = await self._request("GET", "/server")
        if response.is_success:
            return
        if response.status_code == 401 or _error_code(response) == BAD_TOKEN:
            detail = status_detail(response)
            raise InvalidCredentials(f"Postmark rejected the server token ({detail})")
        raise self._failure(response)

    async def create_domain(self, domain: str) -> DomainInfo:
        """Register ``domain`` (``POST /domains`` with the Account token)."""
        body: dict[str, Any] = {"Name": domain}
        if self._return_path:
            body["ReturnPathDomain"] = f"{self._return_path}.{domain}"
        return domain_info(json_body(await self._account_call("POST", "/domains", json=body)))

    async def verify_domain(
        self, provider_domain_id: str, known: Sequence[DnsRecord]
    ) -> DomainInfo:
        """Check DKIM, then the Return-Path when there is one."""
        path = f"/domains/{provider_domain_id}"
        info = domain_info(json_body(await self._account_call("PUT", f"{path}/verifyDkim")))
        if any(record.purpose == "return_path" for record in info.records):
            response = await self._account_call("PUT", f"{path}/verifyReturnPath")
            info = domain_info(json_body(response))
        return info

    async def _account_call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        if not isinstance(self._account_token, str) or not self._account_token:
            raise InvalidRequest(
                "Postmark domains need the account's Account token: "
                "add credentials.account_token to this provider"
            )
        headers = {**self._headers(), "X-Postmark-Account-Token": self._account_token}
        del headers["X-Postmark-Server-Token"]
        response = await self._request(method, path, headers=headers, **kwargs)
        if not response.is_success:
            raise self._failure(response, secrets=[self._account_token])
        return response

    def classify(self, response: httpx.Response) -> FailureClass:
        """The module's ``classify``: by ErrorCode when known, else by status."""
        return classify(response)
