"""Time as a dependency, so backoff and leases can be tested without sleeping."""

from __future__ import annotations

import time
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


def as_datetime(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def month_of(epoch: float) -> str:
    """The quota period an instant falls in: ``"2026-05"`` (UTC)."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m")


def month_end(period: str) -> datetime:
    """When a period's quotas reset: the first instant of the next month, UTC."""
    year, month = (int(p) for p in period.split("-"))
    return datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
