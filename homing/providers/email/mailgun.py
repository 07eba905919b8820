"""Mailgun v3: form ``POST /v3/{domain}/messages`` → 200 ``{"id": "<…@domain>"}``."""

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
    response_detail,
    seconds_until_date_in_text,
    send_request,
    status_detail,
)

TRANSIENT = FailureClass.TRANSIENT
THROTTLED = FailureClass.THROTTLED
PROVIDER_PERMANENT = FailureClass.PROVIDER_PERMANENT
MESSAGE_PERMANENT = FailureClass.MESSAGE_PERMANENT

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


class MailgunProvider:
    """Mailgun over HTTP Basic ``api:<key>``; the job id travels as ``v:hjid``."""

    name: ClassVar[str] = "mailgun"
    supports_idempotency: ClassVar[bool] = False

    def __init__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> None:
        self._api_key = require_credential(credentials, "api_key", "Mailgun")
        self._domain = require_credential(credentials, "domain", "Mailgun")
        region = str(config.get("region", "us")).lower()
        self._base_url = str(config.get("base_url") or BASE_URLS.get(region, BASE_URLS["us"]))
        self._base_url = self._base_url.rstrip("/")
        self._http = http

    def __repr__(self) -> str:
        return f"MailgunProvider(base_url={self._base_url!r}, domain={self._domain!r})"

    def _auth(self) -> httpx.BasicAuth:
        return httpx.BasicAuth("api", self._api_key)

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
        return form

    async def send(self, email: OutgoingEmail) -> SendResult:
        """Submit ``email`` to the domain's messages endpoint."""
        response = await send_request(
            self._http,
            self.name,
            "POST",
            f"{self._base_url}/v3/{self._domain}/messages",
            auth=self._auth(),
            headers={"Accept": "application/json", "User-Agent": USER_AGENT},
            data=self.build_form(email),
        )
        if not response.is_success:
            raise self._failure(response)
        body = json_body(response)
        message_id = body.get("id") if isinstance(body, dict) else None
        return SendResult(str(message_id) if message_id else None, response.status_code)

    async def check_credentials(self) -> None:
        """Probe ``GET /v3/domains?limit=1``; 401 means the key is rejected.

        A domain sending key cannot call this endpoint and is reported as rejected.
        """
        response = await send_request(
            self._http,
            self.name,
            "GET",
            f"{self._base_url}/v3/domains",
            params={"limit": 1},
            auth=self._auth(),
            headers={"Accept": "application/json", "User-Agent": USER_AGENT},
        )
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

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = await send_request(
            self._http,
            self.name,
            method,
            self._base_url + path,
            auth=self._auth(),
            headers={"Accept": "application/json", "User-Agent": USER_AGENT},
            **kwargs,
        )
        if not response.is_success:
            raise self._failure(response)
        return response

    def _failure(self, response: httpx.Response) -> ProviderFailure:
        failure_class = classify(response)
        retry_after = None
        if failure_class is THROTTLED:
            retry_after = seconds_until_date_in_text(_message(response))
            if retry_after is None:
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
        return ProviderFailure(
            failure_class,
            f"mailgun: {response_detail(response, secrets=[self._api_key])}",
            status_code=response.status_code,
            retry_after=retry_after,
        )
