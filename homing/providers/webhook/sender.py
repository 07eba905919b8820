"""Deliver one webhook job: sign, POST to the tenant's URL, classify the answer.

Success is 2xx only. Redirects are not followed (a 3xx fails the job: the URL
should name the final address). 408, 429, 5xx, timeouts and connection errors are
transient (429 is ``throttled`` and honours ``Retry-After``); every other status is
``message_permanent``. 410 Gone also marks the URL gone for the tenant, and later
jobs to it fail without a request until the tenant re-enables it.
"""

from __future__ import annotations

import httpx

from homing.clock import Clock
from homing.crypto import Sealer
from homing.errors import UrlRefused
from homing.models import FailureClass, Job, ProviderAccount
from homing.providers.base import ProviderFailure, SendResult
from homing.providers.http import parse_retry_after
from homing.providers.webhook.ssrf import UrlPolicy, check_url
from homing.providers.webhook.transport import AddressRefused, WebhookClients, read_capped
from homing.store.webhooks import WebhookStore
from homing.webhooks.message import EVENT_TYPE_HEADER, RESERVED_HEADERS, WebhookMessage
from homing.webhooks.message import read_message as read_webhook_message
from homing.webhooks.secrets import WebhookSecrets
from homing.webhooks.signing import SignatureFormat, signature_headers

__all__ = ["WebhookSender", "classify_status", "message_id"]

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
    """The ``Sender`` for the webhook channel (see the module docstring)."""

    def __init__(
        self,
        *,
        store: WebhookStore,
        secrets: WebhookSecrets,
        sealer: Sealer,
        clients: WebhookClients,
        policy: UrlPolicy,
        clock: Clock,
        excerpt_bytes: int,
    ) -> None:
        self._store = store
        self._secrets = secrets
        self._sealer = sealer
        self._clients = clients
        self._policy = policy
        self._clock = clock
        self._excerpt_bytes = excerpt_bytes

    def supports_idempotency(self, account: ProviderAccount) -> bool:
        # Receivers deduplicate on webhook-id; timeouts are transient, never uncertain.
        return False

    def destination(self, account: ProviderAccount, job: Job) -> str | None:
        """The URL this job is delivered to (the sandbox guard of test keys asks)."""
        url = job.payload.get("url")
        return url if isinstance(url, str) else None

    async def send(self, account: ProviderAccount, job: Job) -> SendResult:
        message = read_webhook_message(self._sealer, job.tenant_id, job.payload)
        context = await self._store.delivery_context(job.tenant_id, message.url)
        if context.gone:
            raise _fail(
                FailureClass.MESSAGE_PERMANENT,
                "the endpoint answered 410 Gone before; "
                "re-enable it with POST /v1/webhook-endpoints/enable",
            )
        try:
            check_url(message.url, self._policy)
        except UrlRefused as exc:
            raise _fail(FailureClass.MESSAGE_PERMANENT, exc.message) from None
        headers = self._headers(
            job,
            message,
            self._secrets.open_all(context.secrets),
            context.settings.webhook_signature_format,
        )
        status, excerpt, retry_after = await self._post(message.url, message.body, headers)
        failure_class = classify_status(status)
        if failure_class is None:
            return SendResult(None, status, excerpt)
        if status == 410:
            await self._store.mark_gone(job.tenant_id, message.url, job.id)
        raise _fail(
            failure_class,
            _status_detail(status),
            status_code=status,
            retry_after=retry_after,
            response_excerpt=excerpt,
        )

    def _headers(
        self,
        job: Job,
        message: WebhookMessage,
        signing_secrets: list[str],
        signature_format: SignatureFormat,
    ) -> dict[str, str]:
        headers = {k: v for k, v in message.headers.items() if k.lower() not in RESERVED_HEADERS}
        headers["Content-Type"] = "application/json"
        headers["Accept-Encoding"] = "identity"
        if message.event_type:
            headers[EVENT_TYPE_HEADER] = message.event_type
        headers.update(
            signature_headers(
                signing_secrets, message_id(job), self._clock.now(), message.body, signature_format
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
