"""How each vendor retries an event post that was refused, and the sandbox's clock.

After a refusal (a status the vendor retries, or no answer at all) the sandbox posts the
same signed body again on the vendor's published schedule; each delay starts when the
attempt before it failed, and a vendor gives up after its window. The schedules
(docs/security.md, "Replay windows", has the sources):

    mailgun    5, 10, 15 min, 1, 2, 4 h; "during 8 hours". 406 stops it; ``delivered``
               events are not retried.
    sendgrid   "increasing intervals for up to 24 hours" (no published steps: the
               sandbox doubles from a minute up to 8 h).
    resend     Svix: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; each attempt signed anew
               (``svix-timestamp`` is the attempt's time), ``svix-id`` kept.
    postmark   1, 5, 10, 10, 10, 15, 30 min, 1, 2, 6 h (its inbound webhook's published
               schedule); 403 stops it.
    vonage     429 and 5xx only: 5 s doubling to 15 min, then every 15 min, for 24 h.
    twilio     status callbacks are not retried (only with connection overrides).
    telegram   "a reasonable amount of attempts", unpublished: not retried here.

Time is the sandbox's own clock (``SandboxClock``): the wall clock plus an offset that
``POST /_sandbox/clock`` sets and ``POST /_sandbox/events/retry`` moves forward, so a
test can start an outage hours ago and replay the vendor's schedule up to now without
waiting. Pending retries are bounded; the oldest is dropped past the bound.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

HOUR: Final = 3600.0
MAX_PENDING: Final = 10_000
# The largest offset or single move of the sandbox's clock: a month.
MAX_CLOCK_SECONDS: Final = 31 * 24 * HOUR


def _doubling(first: float, cap: float, window: float) -> tuple[float, ...]:
    delays: list[float] = []
    delay = first
    while sum(delays) + min(delay, cap) <= window:
        delays.append(min(delay, cap))
        delay *= 2
    return tuple(delays)


@dataclass(frozen=True, slots=True)
class Schedule:
    """One vendor's retries: the delay before each, and what ends them early.

    ``stops``: statuses after which the vendor gives up. ``retries``: the statuses it
    retries, when it retries only some (any other non-2xx stops it). ``resigns``: each
    attempt is signed at its own time. ``skip``: event kinds never retried."""

    delays: tuple[float, ...]
    stops: frozenset[int] = frozenset()
    retries: frozenset[int] | None = None
    resigns: bool = False
    skip: frozenset[str] = frozenset()

    @property
    def window(self) -> float:
        """Seconds from the first attempt to the last retry."""
        return sum(self.delays)

    def retried(self, status: int | None, kind: str) -> bool:
        """Whether an attempt answered ``status`` (None: no answer) is tried again."""
        if kind in self.skip or (status is not None and 200 <= status < 300):
            return False
        if status is None:
            return True
        if self.retries is not None:
            return status in self.retries
        return status not in self.stops


SCHEDULES: Final[dict[str, Schedule]] = {
    "mailgun": Schedule(
        (300, 600, 900, HOUR, 2 * HOUR, 4 * HOUR),
        stops=frozenset({406}),
        skip=frozenset({"delivered"}),
    ),
    "sendgrid": Schedule(_doubling(60, 8 * HOUR, 24 * HOUR)),
    "resend": Schedule((5, 300, 1800, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR), resigns=True),
    "postmark": Schedule(
        (60, 300, 600, 600, 600, 900, 1800, HOUR, 2 * HOUR, 6 * HOUR), stops=frozenset({403})
    ),
    "vonage": Schedule(_doubling(5, 900, 24 * HOUR), retries=frozenset({429, *range(500, 600)})),
    "twilio": Schedule(()),
    "telegram": Schedule(()),
}


class SandboxClock:
    """The wall clock plus an offset that tests set and move (never backwards)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def now(self) -> float:
        return time.time() + self.offset

    def set_offset(self, seconds: float) -> None:
        self.offset = seconds

    def advance(self, seconds: float) -> None:
        self.offset += seconds


# Headers for an attempt at a moment (Svix signs each attempt): (body, at) -> headers.
Resigner = Callable[[bytes, float], dict[str, str]]


@dataclass(kw_only=True, slots=True)
class Pending:
    """A refused event post waiting for its next attempt."""

    provider: str
    kind: str
    url: str
    body: bytes
    headers: dict[str, str]
    job_id: str | None
    first_at: float
    due_at: float
    attempts: int = 1
    resign: Resigner | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, object]:
        return {
            "provider": self.provider,
            "type": self.kind,
            "url": self.url,
            "job_id": self.job_id,
            "attempts": self.attempts,
            "first_at": self.first_at,
            "due_at": self.due_at,
        }


class RetryBook:
    """The refused posts still to be tried again, and the lock that lets one pump at a
    time post the due ones (so a retry is posted once however the pump is driven)."""

    def __init__(self, capacity: int = MAX_PENDING) -> None:
        self._pending: list[Pending] = []
        self._capacity = capacity
        self.lock = asyncio.Lock()

    def after_failure(self, pending: Pending, status: int | None, now: float) -> bool:
        """Schedule the next attempt of ``pending`` (its ``attempts`` just failed with
        ``status``) if its vendor makes one; whether it does."""
        schedule = SCHEDULES[pending.provider]
        if not schedule.retried(status, pending.kind) or pending.attempts > len(schedule.delays):
            return False
        pending.due_at = now + schedule.delays[pending.attempts - 1]
        self._pending.append(pending)
        if len(self._pending) > self._capacity:
            self._pending.pop(0)
        return True

    def take_due(self, now: float) -> list[Pending]:
        """The pending posts due by ``now``, earliest first, removed from the book."""
        due = sorted((p for p in self._pending if p.due_at <= now), key=lambda p: p.due_at)
        self._pending = [p for p in self._pending if p.due_at > now]
        return due

    def listing(self) -> list[dict[str, object]]:
        return [pending.as_dict() for pending in sorted(self._pending, key=lambda p: p.due_at)]

    def clear(self) -> None:
        self._pending.clear()
