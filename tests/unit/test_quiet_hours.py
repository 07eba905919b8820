"""The quiet window's end, a pure function: pinned on DST days, and property-tested
around every transition of several zones (docs/scheduling.md, "Quiet hours")."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from functools import cache
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from homing.managers.quiet_hours import QuietWindow, quiet_until, window_of

PARIS = ZoneInfo("Europe/Paris")
SECOND = timedelta(seconds=1)

# Northern and southern DST, a midnight gap (Santiago), a half-hour shift (Lord Howe),
# a 45-minute offset (Chatham), no DST at all (Kolkata), and a skipped day (Apia, 2011).
ZONES = (
    "Europe/Paris",
    "America/New_York",
    "Australia/Sydney",
    "America/Santiago",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "Asia/Kolkata",
    "Pacific/Apia",
)


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def _window(start: str, end: str) -> QuietWindow:
    return QuietWindow(time.fromisoformat(start), time.fromisoformat(end))


def test_a_moment_outside_the_window_is_not_held() -> None:
    moment = _utc("2026-06-01T12:00:00+02:00")
    assert quiet_until(moment, _window("21:00", "08:00"), PARIS) is None


def test_a_window_across_midnight_ends_the_next_morning() -> None:
    moment = _utc("2026-06-01T23:10:00+02:00")
    assert quiet_until(moment, _window("21:00", "08:00"), PARIS) == _utc(
        "2026-06-02T08:00:00+02:00"
    )


def test_after_midnight_it_ends_the_same_morning() -> None:
    moment = _utc("2026-06-02T03:00:00+02:00")
    assert quiet_until(moment, _window("21:00", "08:00"), PARIS) == _utc(
        "2026-06-02T08:00:00+02:00"
    )


def test_the_end_is_excluded_and_the_start_included() -> None:
    window = _window("21:00", "08:00")
    assert quiet_until(_utc("2026-06-02T08:00:00+02:00"), window, PARIS) is None
    assert quiet_until(_utc("2026-06-01T21:00:00+02:00"), window, PARIS) is not None


def test_an_end_that_does_not_exist_resolves_to_the_end_of_the_gap() -> None:
    # 2026-03-29 in Paris: 02:00 CET becomes 03:00 CEST; 02:30 never happens.
    moment = _utc("2026-03-29T01:30:00+01:00")
    until = quiet_until(moment, _window("22:00", "02:30"), PARIS)
    assert until == _utc("2026-03-29T03:00:00+02:00")


def test_an_end_that_exists_twice_is_its_first_reading_after_the_moment() -> None:
    # 2026-10-25 in Paris: 03:00 CEST becomes 02:00 CET; 02:30 happens twice.
    window = _window("22:00", "02:30")
    first = quiet_until(_utc("2026-10-25T01:00:00+02:00"), window, PARIS)
    assert first == _utc("2026-10-25T02:30:00+02:00")
    # In the repeated hour, before its second 02:30: held until that one.
    second = quiet_until(_utc("2026-10-25T02:15:00+01:00"), window, PARIS)
    assert second == _utc("2026-10-25T02:30:00+01:00")
    # Between the two readings the clock reads 02:30-03:00 CEST, then 02:00 CET again.
    assert quiet_until(_utc("2026-10-25T02:45:00+02:00"), window, PARIS) is None


def test_a_midnight_gap_resolves_to_one_in_the_morning() -> None:
    # 2026-09-06 in Santiago: 00:00 -04 becomes 01:00 -03.
    santiago = ZoneInfo("America/Santiago")
    until = quiet_until(_utc("2026-09-05T23:00:00-04:00"), _window("22:00", "00:00"), santiago)
    assert until == _utc("2026-09-06T01:00:00-03:00")


def test_a_skipped_day_resolves_to_the_day_after() -> None:
    # Samoa skipped 2011-12-30: 23:59:59 on the 29th (-10) was followed by 00:00 on the 31st.
    apia = ZoneInfo("Pacific/Apia")
    until = quiet_until(_utc("2011-12-29T22:00:00-10:00"), _window("21:00", "08:00"), apia)
    assert until == _utc("2011-12-31T00:00:00+14:00")


@pytest.mark.parametrize(
    "stored",
    [None, "21:00-08:00", {"start": "21:00"}, {"start": 21, "end": 8}, {"start": "x", "end": "y"}],
)
def test_a_stored_window_that_is_none_reads_as_none(stored: object) -> None:
    assert window_of(stored) is None


def test_a_stored_window_reads_as_its_times() -> None:
    assert window_of({"start": "21:00", "end": "08:00"}) == _window("21:00", "08:00")


@cache
def _transitions(name: str) -> tuple[datetime, ...]:
    """Every instant (to the hour) the zone's offset changed, 2011 to 2027."""
    tz = ZoneInfo(name)
    found = []
    day = datetime(2011, 1, 1, tzinfo=UTC)
    while day.year < 2028:
        after = day + timedelta(days=1)
        if day.astimezone(tz).utcoffset() != after.astimezone(tz).utcoffset():
            hours = (day + timedelta(hours=h) for h in range(25))
            found += [
                h for h in hours if h.astimezone(tz).utcoffset() == after.astimezone(tz).utcoffset()
            ][:1]
        day = after
    return tuple(found) or (datetime(2026, 3, 29, tzinfo=UTC),)


_MINUTES = st.one_of(
    st.integers(0, 1439),
    # Ends and starts where the clocks move: midnight, 01:00-03:00 local.
    st.sampled_from([0, 30, 60, 90, 120, 135, 150, 165, 180]),
)


@st.composite
def _cases(draw: st.DrawFn) -> tuple[datetime, QuietWindow, ZoneInfo]:
    name = draw(st.sampled_from(ZONES))
    near = draw(st.sampled_from(_transitions(name)))
    moment = near + timedelta(seconds=draw(st.integers(-36 * 3600, 36 * 3600)))
    start, end = draw(_MINUTES), draw(_MINUTES)
    if start == end:
        end = (end + 1) % 1440
    window = QuietWindow(time(start // 60, start % 60), time(end // 60, end % 60))
    return moment, window, ZoneInfo(name)


def _wall(instant: datetime, tz: ZoneInfo) -> time:
    return instant.astimezone(tz).time().replace(tzinfo=None)


@settings(max_examples=3000, deadline=None)
@given(_cases())
def test_the_window_ends_at_the_first_reading_of_its_end_after_the_moment(
    case: tuple[datetime, QuietWindow, ZoneInfo],
) -> None:
    moment, window, tz = case
    until = quiet_until(moment, window, tz)
    if until is None:
        assert not window.holds(_wall(moment, tz))
        return
    assert window.holds(_wall(moment, tz))
    assert moment < until <= moment + timedelta(hours=49)
    assert until.tzinfo is UTC
    # The window lasted until then: a second before, the local clock was still inside it.
    assert window.holds(_wall(until - SECOND, tz))
    local = until.astimezone(tz)
    if local.time().replace(tzinfo=None) != window.end:
        # The end did not exist that day: ``until`` is where the gap ends.
        assert (until - SECOND).astimezone(tz).utcoffset() != local.utcoffset()
    # No earlier reading of the end came between the moment and ``until``.
    for fold in (0, 1):
        reading = datetime.combine(local.date(), window.end, tzinfo=tz).replace(fold=fold)
        instant = reading.astimezone(UTC)
        if _wall(instant, tz) == window.end:
            assert instant <= moment or instant >= until
