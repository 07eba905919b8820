"""Time as a dependency, so backoff and leases can be tested without sleeping."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    """The one source of time, injected everywhere so tests can move it."""

    def now(self) -> float:
        """Seconds since the epoch."""
        ...


class SystemClock:
    """The wall clock."""

    def now(self) -> float:
        return time.time()


class ManualClock:
    """A clock that moves only when told to; for tests."""

    def __init__(self, start: float | None = None) -> None:
        self._now = time.time() if start is None else start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds


# The years a moment someone names (a filter's ``since``/``until``) may fall in: inside
# them, converting one to UTC or storing it can never overflow.
FIRST_YEAR, LAST_YEAR = 1970, 9998


def in_utc(value: datetime) -> datetime:
    """``value`` in UTC (one without an offset is UTC); ValueError for a moment outside
    ``FIRST_YEAR``..``LAST_YEAR``."""
    if not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise ValueError(f"a moment between the years {FIRST_YEAR} and {LAST_YEAR}")
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def parse_moment(text: str) -> datetime:
    """An ISO 8601 moment from text (a command-line argument), in UTC; ValueError if it
    is none or out of range."""
    return in_utc(datetime.fromisoformat(text))


def as_datetime(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def month_of(epoch: float) -> str:
    """The quota period an instant falls in: ``"2026-05"`` (UTC)."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m")


def month_end(period: str) -> datetime:
    """When a period's quotas reset: the first instant of the next month, UTC."""
    year, month = (int(p) for p in period.split("-"))
    return datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)


class Heartbeat:
    """When a worker loop last made progress, for ``/readyz``: the loop beats once per
    iteration, idle or not, and a reader asks how long ago that was. Time is the
    monotonic clock unless ``now`` is given (tests move it by hand)."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._last: float | None = None

    def beat(self) -> None:
        self._last = self._now()

    def stop(self) -> None:
        """The loop ended: this process no longer runs a worker."""
        self._last = None

    def age(self) -> float | None:
        """Seconds since the last beat; None while no worker loop runs here."""
        return None if self._last is None else self._now() - self._last
