"""Reconciliation: inbound events per hour and type, with their lag and their errors.

For each UTC hour (by ``received_at``) and event type: how many events came in, the
95th percentile of their lag (received - occurred, nearest-rank, in seconds, over the
events that say when they occurred) and how many were quarantined. Entries that could
not be read at all have no type and are counted as ``unknown``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import AsyncIterable
from dataclasses import dataclass, field
from datetime import datetime

from homing.inbound.events import EntryStatus

UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ReportRow:
    """One hour and event type of the inbound report: how many, the p95 lag, the errors."""

    hour: datetime
    type: str
    count: int
    p95_lag_seconds: float | None
    errors: int


@dataclass(slots=True)
class _Bucket:
    count: int = 0
    errors: int = 0
    lags: list[float] = field(default_factory=list)


def p95(values: list[float]) -> float | None:
    """Nearest-rank 95th percentile: the smallest value at or above 95 % of them."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


async def summarize(
    entries: AsyncIterable[tuple[datetime, datetime | None, str | None, str]],
) -> list[ReportRow]:
    """Fold (received_at, occurred_at, event_type, status) tuples into report rows."""
    buckets: dict[tuple[datetime, str], _Bucket] = defaultdict(_Bucket)
    async for received, occurred, event_type, status in entries:
        hour = received.replace(minute=0, second=0, microsecond=0)
        bucket = buckets[(hour, event_type or UNKNOWN)]
        bucket.count += 1
        bucket.errors += status == EntryStatus.QUARANTINED.value
        if occurred is not None:
            bucket.lags.append((received - occurred).total_seconds())
    return [
        ReportRow(hour, kind, b.count, p95(b.lags), b.errors)
        for (hour, kind), b in sorted(buckets.items())
    ]
