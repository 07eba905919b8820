"""Resend: ``POST /emails`` → 200 ``{"id"}``; the one vendor with an ``Idempotency-Key``.

``POST /emails/batch`` takes up to 100 emails and answers ``{"data": [{"id"}, ...]}`` in
the order sent. Homing sends batches in Resend's permissive validation
(``x-batch-validation: permissive``, resend.com/changelog/batch-validation-modes): the
valid emails are sent, and each invalid one is listed as ``errors: [{"index",
"message"}]``, so one bad email fails alone (``message_permanent``) instead of refusing
the whole batch as the default strict mode does. A refusal of the request itself (a
bad key, throttling, an outage) is that failure for every email.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

import httpx

from homing.errors import InvalidCredentials
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
    match_rules,
    parse_retry_after,
    require_credential,
    seconds_until_next_utc_midnight,
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
from homing.vendors.resend import VENDOR

# https://resend.com/docs/api-reference/errors. Resend's docs moved auth errors between
# 400, 401 and 403, so the error `name` decides first, then phrases in the message, then
# the status code.
NAME_CLASSES: Final[Mapping[str, FailureClass]] = {
    "validation_error": MESSAGE_PERMANENT,
    "invalid_idempotency_key": MESSAGE_PERMANENT,
    "invalid_idempotent_request": MESSAGE_PERMANENT,
    "missing_required_field": MESSAGE_PERMANENT,
    "missing_required_parameter": MESSAGE_PERMANENT,
    "invalid_parameter": MESSAGE_PERMANENT,
    "invalid_attachment": MESSAGE_PERMANENT,
    "missing_api_key": PROVIDER_PERMANENT,
    "invalid_api_key": PROVIDER_PERMANENT,
    "restricted_api_key": PROVIDER_PERMANENT,
    "suspended_api_key": PROVIDER_PERMANENT,
    "monthly_quota_exceeded": PROVIDER_PERMANENT,
    "not_found": PROVIDER_PERMANENT,
    "method_not_allowed": PROVIDER_PERMANENT,
    "rate_limit_exceeded": THROTTLED,
    "daily_quota_exceeded": THROTTLED,
    "concurrent_idempotent_requests": TRANSIENT,
    "resource_locked": TRANSIENT,
    "application_error": TRANSIENT,
    "internal_server_error": TRANSIENT,
    "service_unavailable": TRANSIENT,
}
# Checked before the name: newer docs report a bad key as a `validation_error`.
MESSAGE_RULES: Final = (("api key is invalid", PROVIDER_PERMANENT),)
STATUS_CLASSES: Final[Mapping[int, FailureClass]] = {
    400: MESSAGE_PERMANENT,
    401: PROVIDER_PERMANENT,
    403: PROVIDER_PERMANENT,
    422: MESSAGE_PERMANENT,
    429: THROTTLED,
    500: TRANSIENT,
    503: TRANSIENT,
}
DAILY_QUOTA: Final = "daily_quota_exceeded"
SEND_ONLY_KEY: Final = "restricted_api_key"
DEFAULT_BASE_URL: Final = "https://api.resend.com"
BATCH_LIMIT: Final = 100
# Resend documents no byte limit for a batch; its single send takes 40 MB.
BATCH_BYTES: Final = 40 * 1024 * 1024


def _error(response: httpx.Response) -> tuple[str, str]:
    body = json_body(response)
    if not isinstance(body, dict):
        return "", ""
    return str(body.get("name") or ""), str(body.get("message") or "")


def classify(response: httpx.Response) -> FailureClass:
    """The failure class of a Resend error response (message phrase, then name, then status)."""
    name, message = _error(response)
    by_message = match_rules(message, MESSAGE_RULES)
    if by_message is not None:
        return by_message
    if name in NAME_CLASSES:
        return NAME_CLASSES[name]
    return classify_status(response.status_code, STATUS_CLASSES)


DOMAIN_STATUSES: Final[Mapping[str, DomainStatus]] = {
    "verified": DomainStatus.VERIFIED,
    "failed": DomainStatus.FAILED,
}


def domain_info(body: Any) -> DomainInfo:
    """A ``/domains`` object: ``status`` and ``records[{record, name, type, value, …}]``."""
    body = body if isinstance(body, dict) else {}
    records = tuple(
        DnsRecord(
            type=text(record.get("type")).upper(),
            host=text(record.get("name")),
            value=text(record.get("value")),
            purpose=text(record.get("record")).lower() or None,
            priority=record.get("priority") if isinstance(record.get("priority"), int) else None,
            valid=record.get("status") == "verified",
        )
        for record in body.get("records") or []
        if isinstance(record, dict)
    )
    status = DOMAIN_STATUSES.get(text(body.get("status")), DomainStatus.PENDING)
    return DomainInfo(text(body.get("id")), status, records)


class ResendProvider(HttpAdapter):
    """Resend over HTTP; the job id travels as the ``hjid`` tag."""

    name: ClassVar[str] = VENDOR.name
    supports_idempotency: ClassVar[bool] = True
    default_base_url: ClassVar[str] = DEFAULT_BASE_URL
    batch_limit: ClassVar[int] = BATCH_LIMIT
    batch_bytes: ClassVar[int] = BATCH_BYTES

    def __init__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> None:
        self._api_key = require_credential(credentials, "api_key", "Resend")
        super().__init__(http, self.base_url_of(config))

    def _headers(self) -> dict[str, str]:
        # Resend's edge answers 403 to requests without a User-Agent.
        return {"Authorization": f"Bearer {self._api_key}", "User-Agent": USER_AGENT}

    def _secrets(self) -> list[str]:
        return [self._api_key]

    @staticmethod
    def build_payload(email: OutgoingEmail) -> dict[str, Any]:
        """The ``POST /emails`` JSON body for ``email``."""
        content = email.content
        to, sender = mailboxes(content, "resend")
        payload: dict[str, Any] = {
            "from": str(sender),
            "to": [str(to)],
            "subject": content.subject,
            "tags": [{"name": "hjid", "value": email.job_id}],
        }
        if content.text is not None:
            payload["text"] = content.text
        if content.html is not None:
            payload["html"] = content.html
        if content.headers:
            payload["headers"] = dict(content.headers)
        return payload

    async def send(self, email: OutgoingEmail) -> SendResult:
        """Submit ``email`` with its idempotency key, so a resend after a timeout is safe."""
        headers = self._headers()
        if email.idempotency_key:
            headers["Idempotency-Key"] = email.idempotency_key
        response = await self._call(
            "POST", "/emails", headers=headers, json=self.build_payload(email)
        )
        body = json_body(response)
        message_id = body.get("id") if isinstance(body, dict) else None
        return SendResult(str(message_id) if message_id else None, response.status_code)

    async def send_batch(
        self, emails: Sequence[OutgoingEmail], idempotency_key: str | None = None
    ) -> list[BatchOutcome]:
        """Submit up to 100 emails in one ``POST /emails/batch``; one outcome each."""
        if not 1 <= len(emails) <= BATCH_LIMIT:
            raise ValueError(f"a Resend batch carries 1 to {BATCH_LIMIT} emails")
        headers = {**self._headers(), "x-batch-validation": "permissive"}
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        body = [self.build_payload(email) for email in emails]
        answer = await self._batch_call("/emails/batch", body, headers)
        if isinstance(answer, list):
            return answer
        return self._batch_outcomes(json_body(answer), len(emails), answer.status_code)

    def _batch_outcomes(self, body: Any, count: int, status: int) -> list[BatchOutcome]:
        """One outcome per email from ``{"data": [{"id"}], "errors": [{"index",
        "message"}]}``: ``data`` holds the accepted emails' ids in the order sent."""
        data = body.get("data") if isinstance(body, dict) else None
        errors = (body.get("errors") or []) if isinstance(body, dict) else None
        if not isinstance(data, list) or not isinstance(errors, list):
            return unreadable_batch(self.name, count, "no data array")
        refused: dict[int, str] = {}
        for error in errors:
            index = error.get("index") if isinstance(error, dict) else None
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
                return unreadable_batch(self.name, count, "an error without its index")
            assert isinstance(error, dict)
            refused[index] = self._item_words(error.get("message"))
        if len(data) + len(refused) != count:
            return unreadable_batch(self.name, count, "not one answer per email")
        ids = iter(data)
        outcomes: list[BatchOutcome] = []
        for index in range(count):
            if index in refused:
                detail = f"{self.name}: batch item refused: {refused[index]}"
                outcomes.append(ProviderFailure(MESSAGE_PERMANENT, detail, status_code=status))
                continue
            item = next(ids)
            message_id = item.get("id") if isinstance(item, dict) else None
            if not isinstance(message_id, str) or not message_id:
                return unreadable_batch(self.name, count, "an item without an id")
            outcomes.append(SendResult(message_id, status))
        return outcomes

    async def check_credentials(self) -> None:
        """Probe ``GET /domains``; a send-only key (401 ``restricted_api_key``) is valid."""
        response = await self._request("GET", "/domains")
        if response.is_success:
            return
        name, _ = _error(response)
        if response.status_code == 401 and name == SEND_ONLY_KEY:
            return
        failure = self._failure(response)
        if failure.failure_class is PROVIDER_PERMANENT and response.status_code in (400, 401, 403):
            raise InvalidCredentials(f"Resend rejected the API key ({status_detail(response)})")
        raise failure

    async def create_domain(self, domain: str) -> DomainInfo:
        """Register ``domain`` (``POST /domains``); it starts ``not_started``."""
        response = await self._call("POST", "/domains", json={"name": domain})
        return domain_info(json_body(response))

    async def verify_domain(
        self, provider_domain_id: str, known: Sequence[DnsRecord]
    ) -> DomainInfo:
        """Start verification (``POST /domains/{id}/verify``, asynchronous), then read it."""
        await self._call("POST", f"/domains/{provider_domain_id}/verify")
        response = await self._call("GET", f"/domains/{provider_domain_id}")
        return domain_info(json_body(response))

    def classify(self, response: httpx.Response) -> FailureClass:
        """The module's ``classify``: message phrase, then name, then status."""
        return classify(response)

    def _retry_after(self, response: httpx.Response) -> float | None:
        if _error(response)[0] == DAILY_QUOTA:
            return seconds_until_next_utc_midnight()
        return parse_retry_after(response.headers.get("retry-after"))
