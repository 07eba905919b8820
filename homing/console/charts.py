"""Charts drawn on the server as SVG: no script, no library, readable without either.

``daily_bars`` lays out one stacked bar per day (delivered below, failed above, on a
shared scale); the template draws the rectangles and writes each day's numbers as a
``<title>`` and in a table beside it, so the chart is never the only way to read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from homing.domain.volume import DayVolume

WIDTH = 560
HEIGHT = 160
BASELINE = HEIGHT - 20


@dataclass(kw_only=True, frozen=True, slots=True)
class Bar:
    """One day's bar: where it stands and how tall each part is (SVG units)."""

    day: str
    x: float
    width: float
    ok_y: float
    ok_height: float
    bad_y: float
    bad_height: float
    volume: DayVolume

    @property
    def success_percent(self) -> int | None:
        ended = self.volume.completed + self.volume.failed
        return round(100 * self.volume.completed / ended) if ended else None


def last_days(today: datetime, days: int) -> list[str]:
    """The ``days`` UTC dates ending with ``today``'s, oldest first."""
    return [(today - timedelta(days=n)).strftime("%Y-%m-%d") for n in range(days - 1, -1, -1)]


def daily_bars(names: list[str], counts: dict[str, DayVolume]) -> list[Bar]:
    """A bar per day of ``names`` (days without jobs included, at zero)."""
    volumes = [counts.get(name, DayVolume(name, 0, 0, 0)) for name in names]
    top = max((v.total for v in volumes), default=0) or 1
    slot = WIDTH / max(1, len(volumes))
    bars = []
    for index, v in enumerate(volumes):
        ok = (BASELINE - 10) * v.completed / top
        bad = (BASELINE - 10) * v.failed / top
        bars.append(
            Bar(
                day=v.day,
                x=round(index * slot + slot * 0.15, 1),
                width=round(slot * 0.7, 1),
                ok_y=round(BASELINE - ok, 1),
                ok_height=round(ok, 1),
                bad_y=round(BASELINE - ok - bad, 1),
                bad_height=round(bad, 1),
                volume=v,
            )
        )
    return bars
