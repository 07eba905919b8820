"""The sandbox's memory: what it received, the faults it injects, the replies it owes.

Everything here is synchronous and runs on the event loop's thread, so no
read-modify-write interleaves with another request; only ``SandboxState.hang`` awaits.
Stores are bounded so a benchmark with millions of sends keeps a flat footprint.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from homing.sandbox.chat_rules import RuleBook
from homing.sandbox.domain_state import DomainBook
from homing.sandbox.retries import RetryBook, SandboxClock
from homing.sandbox.signing import SandboxKeys

PROVIDERS = (
    "sendgrid",
    "resend",
    "postmark",
    "mailgun",
    "smtp",
    "slack",
    "telegram",
    "twilio",
    "vonage",
)

IDEMPOTENCY_TTL_SECONDS = 24 * 3600.0


class FaultMode(StrEnum):
    """The faults the sandbox can inject into a provider call."""

    ERROR = "error"
    TIMEOUT = "timeout"
    ACCEPT_THEN_HANG = "accept_then_hang"


class FaultScope(StrEnum):
    """How long an injected fault lasts."""

    SEND = "send"
    CHECK = "check"
    ALL = "all"


@dataclass(kw_only=True, frozen=True, slots=True)
class FaultRule:
    """One injected fault: a delay, an error status, a hang, or a delay then one of those.

    ``count`` limits the rule to the next N matching requests; ``None`` keeps it until
    cleared. ``scope`` says whether sends, credential checks or both are affected.
    """

    provider: str
    mode: FaultMode = FaultMode.ERROR
    status: int | None = None
    retry_after: float | None = None
    latency_ms: int = 0
    count: int | None = None
    scope: FaultScope = FaultScope.SEND

    def covers(self, scope: FaultScope) -> bool:
        """Whether the rule applies to a request of this scope."""
        return self.scope is FaultScope.ALL or self.scope is scope


@dataclass(slots=True)
class _ArmedRule:
    rule_id: int
    rule: FaultRule
    remaining: int | None

    def as_dict(self) -> dict[str, Any]:
        rule = self.rule
        return {
            "id": self.rule_id,
            "provider": rule.provider,
            "mode": str(rule.mode),
            "status": rule.status,
            "retry_after": rule.retry_after,
            "latency_ms": rule.latency_ms,
            "count": rule.count,
            "remaining": self.remaining,
            "scope": str(rule.scope),
        }


class FaultBook:
    """Fault rules per provider.

    A counted rule takes the next requests before any open-ended one (first added,
    first used); among open-ended rules the newest wins, so a test can override a
    standing latency rule without clearing it.
    """

    def __init__(self) -> None:
        self._rules: dict[str, list[_ArmedRule]] = {}
        self._next_id = 1

    def add(self, rule: FaultRule) -> dict[str, Any]:
        """Arm ``rule`` and return its listing entry (with the id it was given)."""
        armed = _ArmedRule(self._next_id, rule, rule.count)
        self._next_id += 1
        self._rules.setdefault(rule.provider, []).append(armed)
        return armed.as_dict()

    def clear(self, provider: str | None = None) -> None:
        """Disarm every rule, or only those of ``provider``."""
        if provider is None:
            self._rules.clear()
        else:
            self._rules.pop(provider, None)

    def listing(self) -> list[dict[str, Any]]:
        """The armed rules as JSON-ready dicts, with the uses each has left."""
        return [armed.as_dict() for rules in self._rules.values() for armed in rules]

    def take(self, provider: str, scope: FaultScope) -> FaultRule | None:
        """Return the rule for this request of ``provider``, spending one use of it."""
        rules = self._rules.get(provider)
        if not rules:
            return None
        for armed in rules:
            if armed.remaining is not None and armed.rule.covers(scope):
                armed.remaining -= 1
                if armed.remaining <= 0:
                    rules.remove(armed)
                return armed.rule
        for armed in reversed(rules):
            if armed.rule.covers(scope):
                return armed.rule
        return None


@dataclass(kw_only=True, frozen=True, slots=True)
class RecordedMessage:
    """One message the sandbox accepted, as a test reads it back.

    ``headers`` are the extra header fields the message carried, as (name, value) in the
    order the vendor's request gave them (SendGrid's and Resend's ``headers`` object,
    Postmark's ``Headers`` array, Mailgun's ``h:`` fields); for SMTP every header field
    of the message as it arrived, unfolded.
    """

    provider: str
    to: tuple[str, ...]
    sender: str
    subject: str | None
    text: str | None
    html: str | None
    message_id: str
    job_id: str | None = None
    idempotency_key: str | None = None
    received_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    headers: tuple[tuple[str, str], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of ``GET /_sandbox/messages`` (``sender`` becomes ``from``)."""
        return {
            "provider": self.provider,
            "to": list(self.to),
            "from": self.sender,
            "subject": self.subject,
            "text": self.text,
            "html": self.html,
            "idempotency_key": self.idempotency_key,
            "job_id": self.job_id,
            "message_id": self.message_id,
            "received_at": self.received_at.isoformat(),
            "headers": [[name, value] for name, value in self.headers],
        }


class Recorder:
    """The last ``capacity`` accepted messages plus running totals, O(1) per message."""

    def __init__(self, capacity: int = 100_000) -> None:
        self._messages: deque[RecordedMessage] = deque(maxlen=capacity)
        self._received: Counter[str] = Counter()
        self._requests: Counter[str] = Counter()
        self._throttled: Counter[str] = Counter()
        # Called with every accepted message (the events poster posts after sends).
        self.listeners: dict[str, Callable[[RecordedMessage], None]] = {}

    def record(self, message: RecordedMessage) -> None:
        """Keep ``message``, dropping the oldest past capacity, and count it."""
        self._messages.append(message)
        self._received[message.provider] += 1
        for listener in self.listeners.values():
            listener(message)

    def count_request(self, provider: str) -> None:
        """Count one send request to ``provider``, accepted or not."""
        self._requests[provider] += 1

    def count_throttled(self, provider: str) -> None:
        """Count one 429 the sandbox answered for ``provider`` (an injected fault)."""
        self._throttled[provider] += 1

    def messages(
        self, provider: str | None = None, job_id: str | None = None
    ) -> list[RecordedMessage]:
        """The kept messages, oldest first, optionally filtered by provider and job id."""
        return [
            message
            for message in self._messages
            if (provider is None or message.provider == provider)
            and (job_id is None or message.job_id == job_id)
        ]

    def clear(self) -> None:
        """Forget the messages and reset the counters."""
        self._messages.clear()
        self._received.clear()
        self._requests.clear()
        self._throttled.clear()

    def stats(self) -> dict[str, Any]:
        """Counters per provider (received and requested), the total, and how many are kept."""
        return {
            "received": {name: self._received[name] for name in PROVIDERS},
            "requests": {name: self._requests[name] for name in PROVIDERS},
            "throttled": {name: self._throttled[name] for name in PROVIDERS},
            "total_received": sum(self._received.values()),
            "stored": len(self._messages),
        }


@dataclass(frozen=True, slots=True)
class StoredReply:
    """The reply the sandbox gave to an idempotency key, replayed on a repeat."""

    fingerprint: str
    status_code: int
    body: bytes
    stored_at: float


class IdempotencyCache:
    """Replies kept by idempotency key (Resend keeps them 24 h), bounded in size."""

    def __init__(self, capacity: int = 100_000, ttl: float = IDEMPOTENCY_TTL_SECONDS) -> None:
        self._replies: OrderedDict[str, StoredReply] = OrderedDict()
        self._capacity = capacity
        self._ttl = ttl

    def get(self, key: str) -> StoredReply | None:
        """The reply stored under ``key`` unless it has expired."""
        reply = self._replies.get(key)
        if reply is not None and time.monotonic() - reply.stored_at > self._ttl:
            del self._replies[key]
            return None
        return reply

    def put(self, key: str, fingerprint: str, status_code: int, body: bytes) -> None:
        """Store the reply for ``key`` and the fingerprint of the body that produced it."""
        self._replies[key] = StoredReply(fingerprint, status_code, body, time.monotonic())
        self._replies.move_to_end(key)
        while len(self._replies) > self._capacity:
            self._replies.popitem(last=False)

    def clear(self) -> None:
        self._replies.clear()


class SandboxState:
    """All the sandbox remembers, shared by the vendor apps, the SMTP sink and tests."""

    def __init__(self, *, capacity: int = 100_000, max_hang_seconds: float = 300.0) -> None:
        self.recorder = Recorder(capacity)
        self.faults = FaultBook()
        self.idempotency = IdempotencyCache(capacity)
        self.slack: deque[dict[str, Any]] = deque(maxlen=10_000)
        # What the webhook receiver got (homing.sandbox.hook_sink).
        self.hooks: deque[dict[str, Any]] = deque(maxlen=1000)
        self.max_hang_seconds = max_hang_seconds
        self._released = asyncio.Event()
        # Domains and signed events (homing.sandbox.domain_routes, homing.sandbox.events).
        self.keys = SandboxKeys.generate()
        self.domains = DomainBook()
        self.webhooks: dict[str, dict[str, Any]] = {}
        self.events_posted: deque[dict[str, Any]] = deque(maxlen=10_000)
        self.posts: set[asyncio.Task[Any]] = set()
        # The vendors' retries of refused event posts, on the sandbox's own clock.
        self.clock = SandboxClock()
        self.retries = RetryBook()
        # Telegram's and Slack's rate rules, and Telegram's message ids.
        self.chat_rules = RuleBook()
        self._message_numbers = 0

    def messages(self, provider: str | None = None) -> list[RecordedMessage]:
        """The recorded messages, optionally of one provider."""
        return self.recorder.messages(provider)

    def add_fault(self, rule: FaultRule) -> dict[str, Any]:
        """Arm a fault rule, as ``POST /_sandbox/faults`` does."""
        return self.faults.add(rule)

    def reset(self) -> None:
        """Forget messages, counters, faults, idempotent replies, Slack posts, received
        webhooks, domains, event webhooks and pending retries, and put the clock back
        (the signing keys stay)."""
        self.recorder.clear()
        self.faults.clear()
        self.idempotency.clear()
        self.slack.clear()
        self.hooks.clear()
        self.domains.clear()
        self.webhooks.clear()
        self.events_posted.clear()
        self.retries.clear()
        self.clock.set_offset(0.0)
        self.chat_rules.clear()

    def next_message_number(self) -> int:
        """A new message id (Telegram numbers its messages)."""
        self._message_numbers += 1
        return self._message_numbers

    async def drain_posts(self) -> None:
        """Wait until every event post in flight has been answered."""
        while self.posts:
            await asyncio.gather(*list(self.posts), return_exceptions=True)

    def release(self) -> None:
        """End every current and future hang at once (the server is stopping)."""
        self._released.set()

    def rearm(self) -> None:
        """Allow hangs again (the server is starting)."""
        self._released.clear()

    async def hang(self, seconds: float | None = None, until: Awaitable[Any] | None = None) -> None:
        """Wait ``seconds`` (default: the maximum hang), or less on release or ``until``.

        ``until`` is typically the client's disconnect, so a hang never outlives the
        request that caused it by more than the caller's own timeout.
        """
        waiters: list[asyncio.Future[Any]] = [asyncio.ensure_future(self._released.wait())]
        if until is not None:
            waiters.append(asyncio.ensure_future(until))
        timeout = self.max_hang_seconds if seconds is None else seconds
        try:
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
            await asyncio.gather(*waiters, return_exceptions=True)
