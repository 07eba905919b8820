"""``homing events reprocess`` and ``homing report events`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from homing.cli import main
from tests.fixtures import migrated_cli_env


@pytest.fixture(autouse=True)
def _env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    migrated_cli_env(monkeypatch, tmp_path, capsys, clear=("HOMING_BILLING_PRICES",))


def test_reprocess_prints_what_became_of_the_entries(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["events", "reprocess"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary == {
        "received": 0,
        "applied": 0,
        "ignored": 0,
        "quarantined": 0,
        "duplicates": 0,
        "conflicts": 0,
    }


def test_report_events_runs_and_refuses_zero_hours(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "events", "--hours", "24"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["report", "events", "--hours", "0"]) == 2
