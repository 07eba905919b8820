"""Deliver one webhook job: sign, POST to the tenant's URL, classify the answer.

Success is 2xx only. Redirects are not followed (a 3xx fails the job: the URL
should name the final address). 408, 429, 5xx, timeouts and connection errors are
transient (429 is ``throttled`` and honours ``Retry-After``); every other status is
``message_permanent``. 410 Gone raises ``EndpointGone``: the dispatch layer
(``homing.dispatch.webhook_delivery``) marks the URL gone for the tenant, and later
jobs to it fail without a request until the tenant re-enables it.

The sender does provider I/O only: what it needs from the database (the signing
secrets, the signature format) is loaded before the call and passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx

from homing import tracing
from homing.clock import Clock
from homing.errors import UrlRefused
from homing.models import FailureClass, Job, SignatureFormat
from homing.providers.base import ProviderFailure, SendResult
from homing.providers.http import parse_retry_after
from homing.providers.webhook.clients import AddressRefused, WebhookClients, read_capped
from homing.providers.webhook.ssrf import UrlPolicy, check_url
from homing.webhooks.message import EVENT_TYPE_HEADER, RESERVED_HEADERS, WebhookMessage
from homing.webhooks.signing import signature_headers

__all__ = ["EndpointGone", "Signing", "WebhookSender", "classify_status", "message_id"]

NAME = "webhook"


def message_id(job: Job) -> str:
    """``webhook-id``: derived from the job, so every retry carries the same id."""
    return f"msg_{job.id}"


def classify_status(status: int) -> FailureClass | None:
    """None for success (2xx), else what the dispatcher does with this status."""
    if 200 <= status < 300:
        return None
    if status == 429:
        return FailureClass.THROTTLED
    if status == 408 or status >= 500:
        return FailureClass.TRANSIENT
    return FailureClass.MESSAGE_PERMANENT


@dataclass(frozen=True, slots=True)
class Signing:
    """How one delivery is signed: the tenant's live secrets in plaintext (current
    first; none: unsigned) and its ``X-Webhook-*`` format."""

    secrets: Sequence[str] = field(default=(), repr=False)
    format: SignatureFormat = SignatureFormat.DESIGN


class EndpointGone(ProviderFailure):
    """The URL answered 410 Gone: the caller marks it gone for the tenant."""


def _fail(
    failure_class: FailureClass,
    detail: str,
    *,
    status_code: int | None = None,
    retry_after: float | None = None,
    response_excerpt: str | None = None,
) -> ProviderFailure:
    return ProviderFailure(
        failure_class,
        f"{NAME}: {detail}",
        status_code=status_code,
        retry_after=retry_after,
        response_excerpt=response_excerpt,
    )


def _excerpt(raw: bytes, cap: int) -> str:
    # PostgreSQL text cannot hold NUL; a receiver's bytes are not trusted to be UTF-8.
    return raw[:cap].decode("utf-8", errors="replace").replace("\x00", "\ufffd")


class WebhookSender:
    """The webhook channel's provider call: check the URL, sign, POST, classify the
    answer (see the module docstring). ``homing.dispatch.webhook_delivery`` wraps it
    as the channel's ``Sender``."""

    def __init__(
        self,
        *,
        clients: WebhookClients,
        policy: UrlPolicy,
        clock: Clock,
        excerpt_bytes: int,
    ) -> None:
        self._clients = clients
        self._policy = policy
        self._clock = clock
        self._excerpt_bytes = excerpt_bytes

    async def send(self, job: Job, message: WebhookMessage, signing: Signing) -> SendResult:
        """POST ``message`` signed with ``signing``; ProviderFailure (EndpointGone for
        410) unless the receiver answered 2xx."""
        try:
            check_url(message.url, self._policy)
        except UrlRefused as exc:
            raise _fail(FailureClass.MESSAGE_PERMANENT, exc.message) from None
        headers = self._headers(job, message, signing)
        status, excerpt, retry_after = await self._post(message.url, message.body, headers)
        failure_class = classify_status(status)
        if failure_class is None:
            return SendResult(None, status, excerpt)
        raise (EndpointGone if status == 410 else ProviderFailure)(
            failure_class,
            f"{NAME}: {_status_detail(status)}",
            status_code=status,
            retry_after=retry_after,
            response_excerpt=excerpt,
        )

    def _headers(self, job: Job, message: WebhookMessage, signing: Signing) -> dict[str, str]:
        headers = {k: v for k, v in message.headers.items() if k.lower() not in RESERVED_HEADERS}
        headers["Content-Type"] = "application/json"
        headers["Accept-Encoding"] = "identity"
        if message.event_type:
            headers[EVENT_TYPE_HEADER] = message.event_type
        traceparent = tracing.current_traceparent()
        if traceparent is not None:
            # Tracing on: the call's own context replaces the message's (a tracestate
            # without its traceparent would describe another trace).
            traced = (tracing.TRACEPARENT, tracing.TRACESTATE)
            headers = {k: v for k, v in headers.items() if k.lower() not in traced}
            headers[tracing.TRACEPARENT] = traceparent
        headers.update(
            signature_headers(
                signing.secrets,
                message_id(job),
                self._clock.now(),
                message.body,
                signing.format,
            )
        )
        return headers

    async def _post(
        self, url: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, str, float | None]:
        client = self._clients.for_scheme(httpx.URL(url).scheme)
        request = client.build_request("POST", url, content=body, headers=headers)
        try:
            response = await client.send(request, stream=True)
        except AddressRefused as exc:
            raise _fail(FailureClass.MESSAGE_PERMANENT, f"refused: {exc}") from None
        except httpx.TimeoutException as exc:
            raise _fail(FailureClass.TRANSIENT, f"timed out ({type(exc).__name__})") from None
        except httpx.TransportError as exc:
            raise _fail(
                FailureClass.TRANSIENT, f"connection failed ({type(exc).__name__})"
            ) from None
        try:
            raw = await read_capped(response, self._excerpt_bytes)
        finally:
            await response.aclose()
        retry_after = parse_retry_after(response.headers.get("Retry-After"), now=self._clock.now())
        return response.status_code, _excerpt(raw, self._excerpt_bytes), retry_after


def _status_detail(status: int) -> str:
    if 300 <= status < 400:
        return f"HTTP {status}: redirect not followed"
    if status == 410:
        return "HTTP 410 Gone: the endpoint is marked gone until re-enabled"
    return f"HTTP {status}"
