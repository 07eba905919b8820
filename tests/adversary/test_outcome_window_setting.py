"""HOMING_OUTCOME_WINDOW_SECONDS, how long a finished delivery's outcome may wait to be
written with others: an operator's (or a hostile environment's) value outside 0 to 10 s is
refused at start, so outcomes cannot be held (and their leases kept) without bound."""

from __future__ import annotations

import time

import pytest
from pydantic import ValidationError

from homing.settings import Settings


@pytest.mark.parametrize(
    "value",
    ["-0.001", "10.001", "1e308", "inf", "-inf", "nan", "", "0x10", "1" * 100_000, "20 ms"],
)
def test_an_outcome_window_out_of_bounds_or_not_a_number_is_refused(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("HOMING_OUTCOME_WINDOW_SECONDS", value)
    started = time.monotonic()
    with pytest.raises(ValidationError) as raised:
        Settings(_env_file=None)  # type: ignore[call-arg]
    assert time.monotonic() - started < 2, "a long value is refused at once"
    # The refusal names the setting, not a 100,000-character echo of the value.
    assert "outcome_window_seconds" in str(raised.value)
    assert len(str(raised.value)) < 1000


@pytest.mark.parametrize(("value", "seconds"), [("0", 0.0), ("0.02", 0.02), ("10", 10.0)])
def test_an_outcome_window_within_bounds_is_kept(
    monkeypatch: pytest.MonkeyPatch, value: str, seconds: float
) -> None:
    monkeypatch.setenv("HOMING_OUTCOME_WINDOW_SECONDS", value)
    assert Settings(_env_file=None).worker.outcome_window_seconds == seconds  # type: ignore[call-arg]
