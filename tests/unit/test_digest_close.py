"""When a digest's window closes, a pure function: ``window_seconds`` after it opened,
or the next local ``at`` in the recipient's zone, pinned on DST days (a time the gap
skips resolves to the gap's end, a repeated one to its first occurrence) and
property-tested around several zones' transitions (docs/notifications.md, "Digests")."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from homing.managers.digests import closes_at
from homing.managers.quiet_hours import next_reading

PARIS = ZoneInfo("Europe/Paris")
ZONES = ("Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia")


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def test_a_window_closes_its_length_after_it_opened() -> None:
    assert closes_at(1_000.0, 3600, None, "Europe/Paris") == 4_600.0


def test_a_daily_time_later_today_closes_today() -> None:
    opened = _utc("2026-06-01T07:00:00+02:00")
    assert next_reading(opened, time(9, 0), PARIS) == _utc("2026-06-01T09:00:00+02:00")


def test_a_daily_time_already_past_closes_tomorrow() -> None:
    opened = _utc("2026-06-01T09:00:00+02:00")  # exactly at it: the next one
    assert next_reading(opened, time(9, 0), PARIS) == _utc("2026-06-02T09:00:00+02:00")


def test_a_time_the_spring_gap_skips_closes_at_the_gap_end() -> None:
    opened = _utc("2026-03-28T12:00:00+01:00")
    closes = next_reading(opened, time(2, 30), PARIS)
    assert closes == _utc("2026-03-29T03:00:00+02:00")


def test_a_time_the_autumn_night_repeats_closes_at_its_first_occurrence() -> None:
    opened = _utc("2026-10-24T12:00:00+02:00")
    assert next_reading(opened, time(2, 30), PARIS) == _utc("2026-10-25T02:30:00+02:00")


def test_past_the_first_occurrence_the_repeat_is_not_taken() -> None:
    opened = _utc("2026-10-25T02:45:00+02:00")  # between the two 02:30s
    assert next_reading(opened, time(2, 30), PARIS) == _utc("2026-10-26T02:30:00+01:00")


def test_a_recipient_with_no_or_an_unknown_zone_is_on_utc() -> None:
    opened = _utc("2026-06-01T07:00:00+00:00").timestamp()
    nine = _utc("2026-06-01T09:00:00+00:00").timestamp()
    assert closes_at(opened, None, "09:00", None) == nine
    assert closes_at(opened, None, "09:00", "Mars/Olympus_Mons") == nine


@settings(max_examples=400, deadline=None)
@given(
    zone=st.sampled_from(ZONES),
    offset=st.integers(min_value=0, max_value=3 * 366 * 86_400),
    hour=st.integers(min_value=0, max_value=23),
    minute=st.sampled_from((0, 15, 30, 45, 59)),
)
def test_the_close_is_the_first_later_instant_the_clock_reads_it(
    zone: str, offset: int, hour: int, minute: int
) -> None:
    tz = ZoneInfo(zone)
    opened = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(seconds=offset)
    wall = time(hour, minute)
    closes = next_reading(opened, wall, tz)
    assert closes > opened
    assert closes - opened <= timedelta(hours=49)  # Apia skipped a whole day in 2011
    local = closes.astimezone(tz)
    if local.time().replace(tzinfo=None) != wall:
        # Only a gap moves it: one second earlier, the clock was before ``wall`` on
        # the day before the jump, and the offset changed.
        before = (closes - timedelta(seconds=1)).astimezone(tz)
        assert before.utcoffset() != local.utcoffset()
        return
    assert local.fold == 0  # a repeated time's first occurrence
    # An earlier instant after ``opened`` reading ``wall`` can only be a repeat.
    for back in (timedelta(hours=h) for h in (1, 2, 23, 24, 25)):
        earlier = (closes - back).astimezone(tz)
        if earlier > opened and earlier.time().replace(tzinfo=None) == wall:
            assert earlier.fold == 1, earlier
