"""Quiet hours: when a send that falls in a recipient's quiet window may go.

A window is two wall-clock times in the recipient's own zone, ``start`` and ``end``
(``"21:00"``-``"08:00"`` wraps midnight); a moment whose local time is at or after
``start`` and before ``end`` is quiet. ``quiet_until`` is a pure function of the moment,
the window and the zone, so it is tested across the DST dates of many zones without a
clock or a database (docs/scheduling.md, "Quiet hours").

Across DST the window ends, deterministically, at the first instant after the moment at
which the local clock reads ``end``:

- on a spring-forward day when ``end`` does not exist (02:30 in a zone that jumps
  from 02:00 to 03:00), at the first instant after the gap (03:00 local);
- on an autumn day when ``end`` exists twice, at its first occurrence after the
  moment: the earlier one, unless the moment is already in the repeated hour past it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

__all__ = ["QuietWindow", "next_reading", "quiet_until", "window_of", "zone"]

_SECOND = timedelta(seconds=1)


@dataclass(frozen=True, slots=True)
class QuietWindow:
    """Quiet from ``start`` (included) to ``end`` (excluded), local wall-clock times."""

    start: time
    end: time

    def holds(self, wall: time) -> bool:
        """Whether a local wall-clock time is inside the window."""
        if self.start < self.end:
            return self.start <= wall < self.end
        return wall >= self.start or wall < self.end


def window_of(stored: object) -> QuietWindow | None:
    """The window a stored ``{"start": "21:00", "end": "08:00"}`` describes (validated
    when it was stored); None for none or anything else."""
    if not isinstance(stored, dict):
        return None
    start, end = stored.get("start"), stored.get("end")
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    try:
        window = QuietWindow(time.fromisoformat(start), time.fromisoformat(end))
    except ValueError:
        return None
    return None if window.start == window.end else window


@lru_cache(maxsize=512)
def zone(name: str) -> ZoneInfo:
    """The zone of an IANA name already checked (``check_timezone``), cached."""
    return ZoneInfo(name)


def quiet_until(moment: datetime, window: QuietWindow, tz: ZoneInfo) -> datetime | None:
    """When the quiet window ``moment`` falls in ends, in UTC; None when ``moment`` (an
    aware datetime) is outside the window in ``tz``."""
    local = moment.astimezone(tz)
    wall = local.time().replace(tzinfo=None)
    if not window.holds(wall):
        return None
    day = local.date()
    if window.start > window.end and wall >= window.start:
        day += timedelta(days=1)
    return _first_reading(day, window.end, tz, moment.astimezone(UTC))


def _first_reading(day: date, wall: time, tz: ZoneInfo, after: datetime) -> datetime:
    """The first instant later than ``after`` at which the clock in ``tz`` reads
    ``wall`` on ``day``, or, when it never does that day (a gap), the gap's end."""
    for fold in (0, 1):
        candidate = datetime.combine(day, wall, tzinfo=tz).replace(fold=fold)
        instant = candidate.astimezone(UTC)
        if instant.astimezone(tz).replace(tzinfo=None) != candidate.replace(tzinfo=None):
            return _gap_end(candidate)
        if instant > after:
            return instant
    # Unreachable for a moment inside the window; a defined answer all the same.
    return after + _SECOND


def next_reading(after: datetime, wall: time, tz: ZoneInfo) -> datetime:
    """The first instant later than ``after`` (aware) at which the clock in ``tz`` reads
    ``wall``, in UTC (a daily digest's close, docs/notifications.md "Digests"). As for
    quiet hours: a ``wall`` a spring-forward gap skips resolves to the gap's end; one an
    autumn night repeats, to its first occurrence only (past it, the next day's)."""
    day = after.astimezone(tz).date()
    for offset in range(3):
        candidate = datetime.combine(day + timedelta(days=offset), wall, tzinfo=tz)
        instant = candidate.astimezone(UTC)
        if instant.astimezone(tz).replace(tzinfo=None) != candidate.replace(tzinfo=None):
            instant = _gap_end(candidate)
        if instant > after:
            return instant
    return after + timedelta(days=1)  # not reached: a wall time recurs within two days


def _gap_end(candidate: datetime) -> datetime:
    """The instant a gap ``candidate`` (a wall time that does not exist) falls in ends:
    found by halving between the two readings of it, to the second."""
    early = datetime.combine(candidate.date(), candidate.time(), candidate.tzinfo)
    low = early.replace(fold=1).astimezone(UTC)  # before the transition
    high = early.replace(fold=0).astimezone(UTC)  # after it
    after = high.astimezone(candidate.tzinfo).utcoffset()
    while high - low > _SECOND:
        middle = low + (high - low) / 2
        middle = middle.replace(microsecond=0)
        if middle <= low:
            break
        if middle.astimezone(candidate.tzinfo).utcoffset() == after:
            high = middle
        else:
            low = middle
    return high
