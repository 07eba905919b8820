"""Mailgun v3: form ``POST /v3/{domain}/messages`` → 200 ``{"id": "<…@domain>"}``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

import httpx

from homing.errors import InvalidCredentials
from homing.models import DnsRecord, DomainInfo, DomainStatus, FailureClass
from homing.providers.base import (
    OutgoingEmail,
    SendResult,
    mailboxes,
    text,
)
from homing.providers.http import (
    classify_status,
    json_body,
    match_rules,
    parse_retry_after,
    require_credential,
    seconds_until_date_in_text,
    status_detail,
)
from homing.providers.http_adapter import (
    MESSAGE_PERMANENT,
    PROVIDER_PERMANENT,
    THROTTLED,
    TRANSIENT,
    HttpAdapter,
)
from homing.vendors.mailgun import VENDOR

# https://documentation.mailgun.com/docs/mailgun/api-reference/ (errors and codes). A
# 401 body is plain text `Forbidden`, not JSON.
STATUS_CLASSES: Final[Mapping[int, FailureClass]] = {
    400: MESSAGE_PERMANENT,
    401: PROVIDER_PERMANENT,
    402: PROVIDER_PERMANENT,
    403: PROVIDER_PERMANENT,
    404: PROVIDER_PERMANENT,  # "Domain not found", or a region mismatch
    413: MESSAGE_PERMANENT,
    429: THROTTLED,
    500: TRANSIENT,
    501: TRANSIENT,
    502: TRANSIENT,
    503: TRANSIENT,
    504: TRANSIENT,
}
# A 400 is the message's fault unless the account cannot send at all; an unverified
# sender domain stays with the message (docs/architecture.md, "Failure classes"), so
# that phrase is checked first.
BAD_REQUEST_RULES: Final = (
    ("is unverified", MESSAGE_PERMANENT),
    ("not allowed to send", PROVIDER_PERMANENT),
)
BASE_URLS: Final[Mapping[str, str]] = {
    "us": "https://api.mailgun.net",
    "eu": "https://api.eu.mailgun.net",
}


def _message(response: httpx.Response) -> str:
    body = json_body(response)
    if isinstance(body, dict):
        return str(body.get("message") or "")
    return response.text


def classify(response: httpx.Response) -> FailureClass:
    """The failure class of a Mailgun error response (status, refined by the 400 text)."""
    if response.status_code == 400:
        by_text = match_rules(_message(response), BAD_REQUEST_RULES)
        if by_text is not None:
            return by_text
    return classify_status(response.status_code, STATUS_CLASSES)


DOMAIN_STATES: Final[Mapping[str, DomainStatus]] = {
    "active": DomainStatus.VERIFIED,
    "disabled": DomainStatus.FAILED,
}


def _purpose(record: dict[str, Any]) -> str:
    kind, value = text(record.get("record_type")).upper(), text(record.get("value"))
    if kind == "MX":
        return "mx"
    if kind == "CNAME":
        return "tracking"
    return "spf" if value.startswith("v=spf1") else "dkim"


def domain_info(body: Any) -> DomainInfo:
    """A ``/v4/domains`` reply: ``domain.state`` and the sending and receiving records."""
    body = body if isinstance(body, dict) else {}
    domain = body.get("domain") if isinstance(body.get("domain"), dict) else {}
    name = text(domain.get("name"))
    listed = [*(body.get("sending_dns_records") or []), *(body.get("receiving_dns_records") or [])]
    records = tuple(
        DnsRecord(
            type=text(record.get("record_type")).upper(),
            host=text(record.get("name")) or name,
            value=text(record.get("value")),
            purpose=_purpose(record),
            priority=int(record["priority"]) if text(record.get("priority")).isdigit() else None,
            valid=record.get("valid") == "valid",
        )
        for record in listed
        if isinstance(record, dict)
    )
    status = DOMAIN_STATES.get(text(domain.get("state")), DomainStatus.PENDING)
    return DomainInfo(name, status, records)


class MailgunProvider(HttpAdapter):
    """Mailgun over HTTP Basic ``api:<key>``; the job id travels as ``v:hjid``."""

    name: ClassVar[str] = VENDOR.name
    supports_idempotency: ClassVar[bool] = False
    default_base_url: ClassVar[str] = BASE_URLS["us"]

    def __init__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> None:
        self._api_key = require_credential(credentials, "api_key", "Mailgun")
        self._domain = require_credential(credentials, "domain", "Mailgun")
        region = str(config.get("region", "us")).lower()
        regional = BASE_URLS.get(region, self.default_base_url)
        super().__init__(http, str(config.get("base_url") or regional))

    def __repr__(self) -> str:
        return f"MailgunProvider(base_url={self._base_url!r}, domain={self._domain!r})"

    def _auth(self) -> httpx.BasicAuth:
        return httpx.BasicAuth("api", self._api_key)

    def _secrets(self) -> list[str]:
        return [self._api_key]

    @staticmethod
    def build_form(email: OutgoingEmail) -> dict[str, str]:
        """The ``POST /v3/{domain}/messages`` form fields for ``email``."""
        content = email.content
        to, sender = mailboxes(content, "mailgun")
        form = {"from": str(sender), "to": str(to), "subject": content.subject}
        if content.text is not None:
            form["text"] = content.text
        if content.html is not None:
            form["html"] = content.html
        form["v:hjid"] = email.job_id
        for name, value in content.headers:
            form[f"h:{name}"] = value
        return form

    async def send(self, email: OutgoingEmail) -> SendResult:
        """Submit ``email`` to the domain's messages endpoint."""
        path = f"/v3/{self._domain}/messages"
        response = await self._call("POST", path, data=self.build_form(email))
        body = json_body(response)
        message_id = body.get("id") if isinstance(body, dict) else None
        return SendResult(str(message_id) if message_id else None, response.status_code)

    async def check_credentials(self) -> None:
        """Probe ``GET /v3/domains?limit=1``; 401 means the key is rejected.

        A domain sending key cannot call this endpoint and is reported as rejected.
        """
        response = await self._request("GET", "/v3/domains", params={"limit": 1})
        if response.is_success:
            return
        if response.status_code == 401:
            raise InvalidCredentials(f"Mailgun rejected the API key ({status_detail(response)})")
        raise self._failure(response)

    async def create_domain(self, domain: str) -> DomainInfo:
        """Register ``domain`` (``POST /v4/domains``, a form)."""
        response = await self._call("POST", "/v4/domains", data={"name": domain})
        return domain_info(json_body(response))

    async def verify_domain(
        self, provider_domain_id: str, known: Sequence[DnsRecord]
    ) -> DomainInfo:
        """Ask Mailgun to check the records (``PUT /v4/domains/{name}/verify``)."""
        response = await self._call("PUT", f"/v4/domains/{provider_domain_id}/verify")
        return domain_info(json_body(response))

    def classify(self, response: httpx.Response) -> FailureClass:
        """The module's ``classify``: status, refined by the 400 text."""
        return classify(response)

    def _retry_after(self, response: httpx.Response) -> float | None:
        retry_after = seconds_until_date_in_text(_message(response))
        if retry_after is None:
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
        return retry_after
