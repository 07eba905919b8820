"""Email sends that meet within a short window leave through the vendor's batch endpoint.

Each job still runs its own pass (``homing.dispatch.passes``): its candidates, pins,
pacing slot, deadline, attempts, retries, fallback and dead letter are exactly those of
a single send. Only the provider call is shared: ``BatchingEmailSender.send`` puts the
job's email in the buffer of its provider account (one tenant, one provider), and the
buffer leaves in one batch call when it holds the vendor's limit or when the window
has passed since its first email. Each waiting job gets its own item's outcome.

Not batched, sent alone as before: a job with an ordering key (its order rests on one
call at a time), an ``at_most_once`` job (a batch's idempotency key covers the batch,
not the job, so a retry in another batch could not be recognised), a payload carrying
anything but to/from/subject/text/html/headers, and vendors without a batch endpoint.

A batch call cut by the deadline, or whose answer cannot be read item by item, is
``uncertain`` for every job in it. A job whose call was cancelled (its claim was lost)
before the buffer left is left out of the call.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from homing.dispatch.senders import EmailSender
from homing.errors import DecryptionError, EndpointRefused, InvalidRequest
from homing.models import DeliveryMode, FailureClass, Job, ProviderAccount
from homing.providers.base import OutgoingEmail, ProviderFailure, SendResult
from homing.providers.deadline import DEFAULT_DEADLINE_SECONDS, DeadlineExceeded, within
from homing.providers.http_adapter import BatchOutcome
from homing.providers.registry import EMAIL_PROVIDERS

log = logging.getLogger("homing.dispatch")

# The payload fields a batch item carries; any other makes the job go alone.
# Header fields travel per item in Resend's email objects, Postmark's messages and
# SendGrid's personalizations; Mailgun puts items with other header fields in other
# requests (homing/vendors/mailgun/adapter.py).
BATCHABLE_FIELDS = frozenset({"to", "from", "subject", "text", "html", "headers"})


@runtime_checkable
class BatchAdapter(Protocol):
    """An adapter with a vendor batch endpoint (``homing.providers.http_adapter``)."""

    async def send_batch(
        self, emails: list[OutgoingEmail], idempotency_key: str | None = None
    ) -> list[BatchOutcome]: ...


@dataclass(kw_only=True, slots=True)
class _Buffer:
    """The emails waiting to leave through one account in one batch call."""

    account: ProviderAccount
    limit: int
    max_bytes: int
    items: list[tuple[OutgoingEmail, asyncio.Future[SendResult]]] = field(default_factory=list)
    size: int = 0
    timer: asyncio.TimerHandle | None = None


def batch_limits(provider: str) -> tuple[int, int]:
    """(messages, bytes) one batch call of ``provider`` may carry; (0, 0): none."""
    factory = EMAIL_PROVIDERS.get(provider)
    return int(getattr(factory, "batch_limit", 0)), int(getattr(factory, "batch_bytes", 0))


def batchable(job: Job) -> bool:
    """Whether ``job`` may share a batch call (see the module's docstring)."""
    return (
        job.ordering_key is None
        and job.delivery is DeliveryMode.AT_LEAST_ONCE
        and job.payload.keys() <= BATCHABLE_FIELDS
    )


def _size(email: OutgoingEmail) -> int:
    content = email.content
    parts = (content.subject, content.text or "", content.html or "", content.to, content.from_)
    fields = sum(len(name) + len(value) + 32 for name, value in content.headers)
    return sum(len(str(part).encode()) for part in parts) + fields + 256


class BatchingEmailSender(EmailSender):
    """``EmailSender`` whose sends through a batch-capable account share batch calls.

    ``window_seconds`` is how long the first email of a buffer waits for others.
    """

    def __init__(
        self,
        *args: Any,
        window_seconds: float,
        deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._window = window_seconds
        self._deadline = deadline_seconds
        self._buffers: dict[str, _Buffer] = {}
        self._flights: set[asyncio.Task[None]] = set()
        self.batch_calls = 0

    async def send(self, account: ProviderAccount, job: Job) -> SendResult:
        limit, max_bytes = batch_limits(account.vendor)
        if limit < 2 or not batchable(job):
            return await super().send(account, job)
        email = self.outgoing(job)
        future: asyncio.Future[SendResult] = asyncio.get_running_loop().create_future()
        self._add(account, limit, max_bytes, email, future)
        return await future

    def _add(
        self,
        account: ProviderAccount,
        limit: int,
        max_bytes: int,
        email: OutgoingEmail,
        future: asyncio.Future[SendResult],
    ) -> None:
        size = _size(email)
        buffer = self._buffers.get(account.id)
        if buffer is not None and buffer.size + size > buffer.max_bytes:
            self._leave(account.id)
            buffer = None
        if buffer is None:
            buffer = _Buffer(account=account, limit=limit, max_bytes=max_bytes)
            self._buffers[account.id] = buffer
            loop = asyncio.get_running_loop()
            buffer.timer = loop.call_later(self._window, self._leave, account.id)
        buffer.items.append((email, future))
        buffer.size += size
        if len(buffer.items) >= buffer.limit:
            self._leave(account.id)

    def _leave(self, account_id: str) -> None:
        buffer = self._buffers.pop(account_id, None)
        if buffer is None:
            return
        if buffer.timer is not None:
            buffer.timer.cancel()
        # A job cancelled while waiting (its claim was lost) is not sent.
        items = [(email, future) for email, future in buffer.items if not future.done()]
        if not items:
            return
        task = asyncio.create_task(self._fly(buffer.account, items))
        self._flights.add(task)
        task.add_done_callback(self._flights.discard)

    async def _fly(
        self,
        account: ProviderAccount,
        items: list[tuple[OutgoingEmail, asyncio.Future[SendResult]]],
    ) -> None:
        emails = [email for email, _ in items]
        self.batch_calls += 1
        try:
            outcomes = await within(self._deadline, self._call(account, emails))
        except DeadlineExceeded as exc:
            detail = f"{account.vendor}: batch {exc} (the request may have been sent)"
            outcomes = [ProviderFailure(FailureClass.UNCERTAIN, detail) for _ in emails]
        except (EndpointRefused, DecryptionError, InvalidRequest) as exc:
            detail = f"{account.vendor}: not sent, {type(exc).__name__}"
            outcomes = [ProviderFailure(FailureClass.PROVIDER_PERMANENT, detail) for _ in emails]
        except ProviderFailure as failure:
            outcomes = [failure] * len(emails)
        except Exception as exc:  # an adapter bug must not lose the jobs
            log.exception("batch adapter raised unexpectedly")
            detail = f"adapter error: {type(exc).__name__}"
            outcomes = [ProviderFailure(FailureClass.TRANSIENT, detail) for _ in emails]
        for (_, future), outcome in zip(items, outcomes, strict=True):
            if future.done():
                continue
            if isinstance(outcome, ProviderFailure):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    async def _call(
        self, account: ProviderAccount, emails: list[OutgoingEmail]
    ) -> list[BatchOutcome]:
        adapter = self.adapter(account)
        if not isinstance(adapter, BatchAdapter):
            raise ProviderFailure(FailureClass.TRANSIENT, f"{account.vendor}: no batch send")
        # One key per batch, the same whenever the same jobs leave together again.
        digest = hashlib.sha256("\0".join(e.job_id for e in emails).encode()).hexdigest()
        return await adapter.send_batch(emails, idempotency_key=f"homing-batch-{digest[:48]}")

    async def aclose(self) -> None:
        """Send what is buffered now and wait for every batch call in flight."""
        for account_id in list(self._buffers):
            self._leave(account_id)
        if self._flights:
            await asyncio.gather(*self._flights, return_exceptions=True)
