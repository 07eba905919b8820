"""Mailgun v3: form ``POST /v3/{domain}/messages`` → 200 ``{"id": "<…@domain>"}``.

A batch is Mailgun's batch sending (documentation.mailgun.com, user-manual/
sending-messages/batch-sending): up to 1,000 ``to`` in one request, with
``recipient-variables``, a JSON object keyed by each plain recipient address, so that
each recipient gets a message of its own, its ``%recipient.x%`` substituted (in the
subject too: the same page's example). The job id travels as ``v:hjid`` set to
``%recipient.hjid%``, as django-anymail sends per-recipient metadata
(anymail/backends/mailgun.py), so each event's ``user-variables`` names its job although
the request's id is shared. A request holds the messages of one sender with the same
text, html and header fields (those stay as a single send puts them); only the subject
is per recipient. Messages that differ otherwise go in separate requests, and a message
whose fields already hold ``%recipient`` goes alone, never substituted into.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping, Sequence
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
    BatchOutcome,
    HttpAdapter,
)
from homing.providers.one_answer import plan, settle
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
BATCH_LIMIT: Final = 1000
# "The maximum message size Mailgun supports is 25MB" (user-manual/sending-messages).
BATCH_BYTES: Final = 25 * 1000 * 1000
RECIPIENT_MARK: Final = "%recipient"


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


def _batch_key(email: OutgoingEmail) -> Hashable:
    """What the messages of one request share: sender, bodies and header fields."""
    content = email.content
    try:
        _, sender = mailboxes(content, "mailgun")
    except ProviderFailure:
        return ("alone", email.job_id)  # refused as a single send refuses it
    fields = [content.subject, content.text or "", content.html or ""]
    fields += [value for pair in content.headers for value in pair]
    if any(RECIPIENT_MARK in value for value in fields):
        return ("alone", email.job_id)
    return (str(sender), content.text, content.html, content.headers)


def _recipient(email: OutgoingEmail) -> str:
    try:
        return mailboxes(email.content, "mailgun")[0].address
    except ProviderFailure:
        return ""


def batch_form(emails: Sequence[OutgoingEmail]) -> dict[str, str | list[str]]:
    """One batch-sending form for ``emails`` (one sender, bodies and header fields)."""
    form: dict[str, str | list[str]] = dict(MailgunProvider.build_form(emails[0]))
    variables: dict[str, dict[str, str]] = {}
    for email in emails:
        to, _ = mailboxes(email.content, "mailgun")
        variables[to.address] = {"hjid": email.job_id, "subject": email.content.subject}
    form["to"] = [str(mailboxes(email.content, "mailgun")[0]) for email in emails]
    if len({email.content.subject for email in emails}) > 1:
        form["subject"] = "%recipient.subject%"
    form["v:hjid"] = "%recipient.hjid%"
    form["recipient-variables"] = json.dumps(variables, separators=(",", ":"))
    return form


class MailgunProvider(HttpAdapter):
    """Mailgun over HTTP Basic ``api:<key>``; the job id travels as ``v:hjid``."""

    name: ClassVar[str] = VENDOR.name
    supports_idempotency: ClassVar[bool] = False
    default_base_url: ClassVar[str] = BASE_URLS["us"]
    batch_limit: ClassVar[int] = BATCH_LIMIT
    batch_bytes: ClassVar[int] = BATCH_BYTES

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

    async def send_batch(
        self, emails: Sequence[OutgoingEmail], idempotency_key: str | None = None
    ) -> list[BatchOutcome]:
        """Up to 1,000 emails as recipients of as few batch sends as they allow
        (``homing.providers.one_answer``); Mailgun keys no idempotency."""
        if not 1 <= len(emails) <= BATCH_LIMIT:
            raise ValueError(f"a Mailgun batch carries 1 to {BATCH_LIMIT} emails")
        requests = plan(emails, _batch_key, _recipient, BATCH_LIMIT)
        path = f"/v3/{self._domain}/messages"

        async def call(members: list[OutgoingEmail]) -> SendResult:
            response = await self._call("POST", path, data=batch_form(members))
            body = json_body(response)
            message_id = body.get("id") if isinstance(body, dict) else None
            return SendResult(str(message_id) if message_id else None, response.status_code)

        return await settle(emails, requests, call, self.send)

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
