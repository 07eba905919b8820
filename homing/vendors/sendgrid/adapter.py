"""SendGrid v3 Mail Send: ``POST /v3/mail/send`` → 202 with ``X-Message-Id``.

A batch is one Mail Send with several ``personalizations`` (at most 1,000, each address
once: twilio.com/docs/sendgrid/api-reference/mail-send/errors, "Personalizations
errors"). Each personalization carries its message's own ``to``, ``subject``,
``headers`` and ``custom_args.hjid`` (events carry the custom args back flattened, so
each event names its job although the ``X-Message-Id`` is shared). The sender and the
``content`` blocks belong to the request, so a request holds messages of one sender and
one set of parts (text, html); when their bodies differ, the ``content`` blocks are
substitution tags and each personalization's ``substitutions`` hold its own text and
html, within SendGrid's 10,000 bytes of substitutions per personalization (the v3 API
spec, twilio/sendgrid-oai ``tsg_mail_v3.json``, ``personalizations.substitutions``).
A message whose bodies exceed that goes in a request of the messages with the very same
bodies (alone, usually). One 202 answers the request: every message shares its id.
"""

from __future__ import annotations

import secrets
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, ClassVar, Final

import httpx

from homing.addresses import Mailbox
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
    BatchOutcome,
    HttpAdapter,
)
from homing.providers.one_answer import plan, settle
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
BATCH_LIMIT: Final = 1000
# SendGrid's 30 MB per email is third-party knowledge we could not find in its own
# documentation, so it is unverified: a batch stays well under it.
BATCH_BYTES: Final = 20 * 1000 * 1000
SUBSTITUTION_BYTES: Final = 10_000
PARTS: Final = (("text/plain", "text"), ("text/html", "html"))


class _Tags:
    """The substitution tags of one batch call: unguessable, so no tenant's content
    holds one by design (a content that does is sent in a request of its own bodies)."""

    def __init__(self) -> None:
        nonce = secrets.token_hex(8)
        self.text, self.html = f"-hjtext{nonce}-", f"-hjhtml{nonce}-"

    def fits(self, email: OutgoingEmail) -> bool:
        """Whether ``email``'s bodies can travel as its personalization's substitutions."""
        c = email.content
        values = [c.subject, *(v for v in (c.text, c.html) if v is not None)]
        if any(self.text in v or self.html in v for v in values):
            return False
        size = sum(len(v.encode()) for v in (c.text, c.html) if v is not None)
        return size + len(self.text) + len(self.html) <= SUBSTITUTION_BYTES


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
        DnsRecord(
            type=r.type,
            host=r.host,
            value=r.value,
            purpose=r.purpose,
            priority=r.priority,
            valid=bool(results[r.purpose]["valid"]),
        )
        if isinstance(results.get(r.purpose), dict)
        else r
        for r in known
    )
    status = DomainStatus.VERIFIED if body.get("valid") else DomainStatus.PENDING
    return DomainInfo(domain_id, status, records)


def _personalization(email: OutgoingEmail) -> dict[str, Any]:
    content = email.content
    to, _ = mailboxes(content, "sendgrid")
    item: dict[str, Any] = {
        "to": [_address(to)],
        "subject": content.subject,
        "custom_args": {"hjid": email.job_id},
    }
    if content.headers:
        item["headers"] = dict(content.headers)
    return item


def batch_payload(emails: Sequence[OutgoingEmail], tags: _Tags) -> dict[str, Any]:
    """One Mail Send for ``emails`` (one sender, one set of parts: see ``_batch_key``)."""
    first = emails[0].content
    _, sender = mailboxes(first, "sendgrid")
    same = all((e.content.text, e.content.html) == (first.text, first.html) for e in emails)
    personalizations = [_personalization(email) for email in emails]
    if not same:
        for item, email in zip(personalizations, emails, strict=True):
            values = {tags.text: email.content.text, tags.html: email.content.html}
            item["substitutions"] = {tag: v for tag, v in values.items() if v is not None}
    bodies = {"text": first.text, "html": first.html}
    placeholders = {"text": tags.text, "html": tags.html}
    content = [
        {"type": kind, "value": bodies[part] if same else placeholders[part]}
        for kind, part in PARTS
        if bodies[part] is not None
    ]
    return {"personalizations": personalizations, "from": _address(sender), "content": content}


def _batch_key(email: OutgoingEmail, tags: _Tags) -> Hashable:
    """What the messages of one request share: sender and parts, and the bodies
    themselves when they cannot travel as substitutions."""
    content = email.content
    try:
        _, sender = mailboxes(content, "sendgrid")
    except ProviderFailure:
        return ("alone", email.job_id)  # refused as a single send refuses it
    shape = (sender.address.lower(), str(sender), content.text is None, content.html is None)
    if tags.fits(email):
        return shape
    return (*shape, content.text, content.html)


def _recipient(email: OutgoingEmail) -> str:
    try:
        return mailboxes(email.content, "sendgrid")[0].address
    except ProviderFailure:
        return ""


class SendGridProvider(HttpAdapter):
    """SendGrid v3 over HTTP; the job id travels in ``custom_args.hjid``."""

    name: ClassVar[str] = VENDOR.name
    supports_idempotency: ClassVar[bool] = False
    default_base_url: ClassVar[str] = BASE_URLS["global"]
    batch_limit: ClassVar[int] = BATCH_LIMIT
    batch_bytes: ClassVar[int] = BATCH_BYTES

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

    async def send_batch(
        self, emails: Sequence[OutgoingEmail], idempotency_key: str | None = None
    ) -> list[BatchOutcome]:
        """Up to 1,000 emails as personalizations of as few Mail Sends as they allow
        (``homing.providers.one_answer``); SendGrid keys no idempotency."""
        if not 1 <= len(emails) <= BATCH_LIMIT:
            raise ValueError(f"a SendGrid batch carries 1 to {BATCH_LIMIT} emails")
        tags = _Tags()
        requests = plan(emails, lambda e: _batch_key(e, tags), _recipient, BATCH_LIMIT)

        async def call(members: list[OutgoingEmail]) -> SendResult:
            body = batch_payload(members, tags)
            response = await self._call("POST", "/v3/mail/send", json=body)
            return SendResult(response.headers.get("X-Message-Id"), response.status_code)

        return await settle(emails, requests, call, self.send)

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
