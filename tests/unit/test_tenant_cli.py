"""``homing tenant …``: the admin API's tenant operations from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from homing.cli import main
from tests.fixtures import migrated_cli_env


@pytest.fixture(autouse=True)
def _env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    migrated_cli_env(monkeypatch, tmp_path, capsys, clear=("HOMING_ADMIN_TOKEN",))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(["tenant", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_create_prints_exactly_the_tenant_id_and_key(capsys: pytest.CaptureFixture[str]) -> None:
    created = _run(capsys, "create", "acme", "--plan", "STARTUP")
    assert sorted(created) == ["api_key", "tenant_id"]
    assert created["api_key"].startswith("hk_")
    shown = _run(capsys, "show", created["tenant_id"])
    assert (shown["name"], shown["plan"], shown["suspended"]) == ("acme", "STARTUP", False)
    assert [q["name"] for q in shown["usage"]["quotas"]] == ["chat", "sms", "webhook"]


def test_plan_limits_and_suspension_from_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tenant_id = _run(capsys, "create", "acme", "--rate", "12", "--quota", "email=40")["tenant_id"]
    assert _run(capsys, "show", tenant_id)["limits"] == {
        "rate_per_minute": 12,
        "quotas": {"chat": 100, "email": 40, "email+webhook": 100, "sms": 10},
        "priority": "LOW",
    }
    assert _run(capsys, "set-plan", tenant_id, "INDIE")["plan"] == "INDIE"
    changed = _run(
        capsys, "set-limits", tenant_id, "--quota", "webhook=unlimited", "--quota", "sms=5"
    )
    assert changed["custom_quotas"] == {"webhook": None, "sms": 5}
    assert changed["limits"]["quotas"] == {"chat": 10000, "sms": 5}
    assert changed["limits"]["rate_per_minute"] == 12
    reset = _run(capsys, "set-limits", tenant_id, "--plan-rate", "--plan-quotas")
    assert reset["limits"] == {
        "rate_per_minute": 50,
        "quotas": {"chat": 10000, "sms": 1000, "webhook": 4000},
        "priority": None,
    }
    assert _run(capsys, "suspend", tenant_id)["suspended"] is True
    assert _run(capsys, "unsuspend", tenant_id)["suspended"] is False
    listed = _run(capsys, "list")
    assert [t["id"] for t in listed["data"]] == [tenant_id]


@pytest.mark.parametrize(
    "argv",
    [
        ["create", "acme", "--quota", "fax=3"],
        ["create", "acme", "--quota", "email"],
        ["create", "acme", "--quota", "email=lots"],
        ["create", "acme", "--rate", "0"],
        ["show", "0194d1c0-0000-7000-8000-000000000000"],
    ],
)
def test_mistakes_are_reported_plainly(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main(["tenant", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("homing: ")
