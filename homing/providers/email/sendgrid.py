"""SendGrid v3 Mail Send: ``POST /v3/mail/send`` → 202 with ``X-Message-Id``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

import httpx

from homing.addresses import Mailbox
from homing.errors import InvalidCredentials
from homing.models import DnsRecord, DomainInfo, DomainStatus, FailureClass
from homing.providers.base import (
    OutgoingEmail,
    SendResult,
    mailboxes,
    text,
)
from homing.providers.http import (
    USER_AGENT,
    classify_status,
    json_body,
    parse_retry_after,
    require_credential,
    seconds_until_epoch,
    status_detail,
)
from homing.providers.http_adapter import (
    MESSAGE_PERMANENT,
    PROVIDER_PERMANENT,
    THROTTLED,
    TRANSIENT,
    HttpAdapter,
)
from homing.vendors.sendgrid import VENDOR

# https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/responses.
# 403 means two things: a key without mail.send (the provider's setup) or, with `field:
# "from"`, an unverified sender (this message) — see _classify.
STATUS_CLASSES: Final[Mapping[int, FailureClass]] = {
    400: MESSAGE_PERMANENT,
    401: PROVIDER_PERMANENT,
    403: PROVIDER_PERMANENT,
    406: PROVIDER_PERMANENT,
    413: MESSAGE_PERMANENT,
    429: THROTTLED,
    451: PROVIDER_PERMANENT,
    500: TRANSIENT,
    502: TRANSIENT,
    503: TRANSIENT,
    504: TRANSIENT,
}
SENDER_FIELD: Final = "from"
REQUIRED_SCOPE: Final = "mail.send"
BASE_URLS: Final[Mapping[str, str]] = {
    "global": "https://api.sendgrid.com",
    "eu": "https://api.eu.sendgrid.com",
}


def _address(mailbox: Mailbox) -> dict[str, str]:
    if mailbox.display_name:
        return {"email": mailbox.address, "name": mailbox.display_name}
    return {"email": mailbox.address}


def _error_fields(response: httpx.Response) -> set[str]:
    body = json_body(response)
    errors = body.get("errors") if isinstance(body, dict) else None
    if not isinstance(errors, list):
        return set()
    return {str(e["field"]) for e in errors if isinstance(e, dict) and e.get("field")}


def domain_info(body: Any) -> DomainInfo:
    """A ``/v3/whitelabel/domains`` reply: automatic security gives three CNAMEs in ``dns``."""
    body = body if isinstance(body, dict) else {}
    dns = body.get("dns") if isinstance(body.get("dns"), dict) else {}
    records = tuple(
        DnsRecord(
            type=text(record.get("type") or "cname").upper(),
            host=text(record.get("host")),
            value=text(record.get("data")),
            purpose=purpose,
            valid=bool(record.get("valid")),
        )
        for purpose, record in dns.items()
        if isinstance(record, dict) and record.get("host")
    )
    status = DomainStatus.VERIFIED if body.get("valid") else DomainStatus.PENDING
    return DomainInfo(text(body.get("id")), status, records)


def validated(domain_id: str, body: Any, known: Sequence[DnsRecord]) -> DomainInfo:
    """A ``…/validate`` reply: overall ``valid`` and ``validation_results`` per record."""
    body = body if isinstance(body, dict) else {}
    results = body.get("validation_results")
    results = results if isinstance(results, dict) else {}
    records = tuple(
        DnsRecord(r.type, r.host, r.value, r.purpose, r.priority, bool(results[r.purpose]["valid"]))
        if isinstance(results.get(r.purpose), dict)
        else r
        for r in known
    )
    status = DomainStatus.VERIFIED if body.get("valid") else DomainStatus.PENDING
    return DomainInfo(domain_id, status, records)


class SendGridProvider(HttpAdapter):
    """SendGrid v3 over HTTP; the job id travels in ``custom_args.hjid``."""

    name: ClassVar[str] = VENDOR.name
    supports_idempotency: ClassVar[bool] = False
    default_base_url: ClassVar[str] = BASE_URLS["global"]

    def __init__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> None:
        self._api_key = require_credential(credentials, "api_key", "SendGrid")
        region = str(config.get("region", "global"))
        regional = BASE_URLS.get(region, self.default_base_url)
        super().__init__(http, str(config.get("base_url") or regional))

    def _headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self._api_key}",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }

    def _secrets(self) -> list[str]:
        return [self._api_key]

    @staticmethod
    def build_payload(email: OutgoingEmail) -> dict[str, Any]:
        """The Mail Send JSON body for ``email`` (text/plain must precede text/html)."""
        content = email.content
        to, sender = mailboxes(content, "sendgrid")
        parts = [
            {"type": kind, "value": value}
            for kind, value in (("text/plain", content.text), ("text/html", content.html))
            if value is not None
        ]
        payload: dict[str, Any] = {
            "personalizations": [{"to": [_address(to)]}],
            "from": _address(sender),
            "subject": content.subject,
            "content": parts,
            "custom_args": {"hjid": email.job_id},
        }
        if content.headers:
            # ``headers``: an object of string values (names unique: homing.email_headers).
            payload["headers"] = dict(content.headers)
        return payload

    async def send(self, email: OutgoingEmail) -> SendResult:
        """Submit ``email``; 202 means accepted, anything else raises ``ProviderFailure``."""
        response = await self._call("POST", "/v3/mail/send", json=self.build_payload(email))
        return SendResult(response.headers.get("X-Message-Id"), response.status_code)

    async def check_credentials(self) -> None:
        """Require the key to be valid and to hold the ``mail.send`` scope (``GET /v3/scopes``)."""
        response = await self._request("GET", "/v3/scopes")
        if response.status_code in (401, 403):
            raise InvalidCredentials(f"SendGrid rejected the API key ({status_detail(response)})")
        if not response.is_success:
            raise self._failure(response)
        body = json_body(response)
        scopes = body.get("scopes") if isinstance(body, dict) else None
        if not isinstance(scopes, list) or REQUIRED_SCOPE not in scopes:
            raise InvalidCredentials("SendGrid API key lacks the mail.send scope")

    async def create_domain(self, domain: str) -> DomainInfo:
        """Authenticate ``domain`` (``POST /v3/whitelabel/domains``, automatic security)."""
        body = {"domain": domain, "automatic_security": True}
        response = await self._call("POST", "/v3/whitelabel/domains", json=body)
        return domain_info(json_body(response))

    async def verify_domain(
        self, provider_domain_id: str, known: Sequence[DnsRecord]
    ) -> DomainInfo:
        """Ask SendGrid to check the records (``POST …/{id}/validate``)."""
        path = f"/v3/whitelabel/domains/{provider_domain_id}/validate"
        response = await self._call("POST", path)
        return validated(provider_domain_id, json_body(response), known)

    def classify(self, response: httpx.Response) -> FailureClass:
        """By status; a 403 naming the ``from`` field is this message's unverified sender."""
        if response.status_code == 403 and SENDER_FIELD in _error_fields(response):
            return MESSAGE_PERMANENT
        return classify_status(response.status_code, STATUS_CLASSES)

    def _retry_after(self, response: httpx.Response) -> float | None:
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        if retry_after is None:
            retry_after = seconds_until_epoch(response.headers.get("X-RateLimit-Reset"))
        return retry_after
