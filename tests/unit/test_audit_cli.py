"""``homing audit list``, and the ``homing`` commands that change things record an event
with the ``cli`` actor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from homing.cli import main
from tests.fixtures import migrated_cli_env

CLI = {"kind": "cli", "id": "homing", "name": None}


@pytest.fixture(autouse=True)
def _env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    migrated_cli_env(monkeypatch, tmp_path, capsys, clear=("HOMING_ADMIN_TOKEN",))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_tenant_commands_are_recorded_and_listed(capsys: pytest.CaptureFixture[str]) -> None:
    tenant_id = _run(capsys, "tenant", "create", "acme")["tenant_id"]
    _run(capsys, "tenant", "set-plan", tenant_id, "INDIE")
    _run(capsys, "tenant", "set-limits", tenant_id, "--rate", "90")
    _run(capsys, "tenant", "suspend", tenant_id)
    _run(capsys, "tenant", "unsuspend", tenant_id)
    listed = _run(capsys, "audit", "list", "--tenant-id", tenant_id)
    assert [e["action"] for e in listed["data"]] == [
        "tenant.resumed",
        "tenant.suspended",
        "tenant.updated",
        "tenant.plan_changed",
        "tenant.created",
    ]
    assert all(e["actor"] == CLI for e in listed["data"])
    assert listed["data"][2]["changes"] == {"rate_limit_per_minute": {"from": None, "to": 90}}
    assert listed["data"][4]["changes"]["name"] == "acme"
    only = _run(capsys, "audit", "list", "--action", "tenant.created", "--limit", "1")
    assert [e["target_id"] for e in only["data"]] == [tenant_id]
    assert only["next_cursor"] is None


def test_a_change_that_changes_nothing_records_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tenant_id = _run(capsys, "tenant", "create", "acme")["tenant_id"]
    _run(capsys, "tenant", "set-limits", tenant_id)
    listed = _run(capsys, "audit", "list")
    assert [e["action"] for e in listed["data"]] == ["tenant.created"]


def test_a_bad_filter_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--since", "x" * 10_000], ["--action", "tenant.deleted"], ["--limit", "0"]):
        with pytest.raises(SystemExit) as refused:
            main(["audit", "list", *argv])
        assert refused.value.code == 2
        assert "x" * 100 not in capsys.readouterr().err


def test_a_master_key_rotation_is_one_platform_wide_event(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _run(capsys, "tenant", "create", "acme")
    rotated = _run(capsys, "keys", "rotate")
    (event,) = _run(capsys, "audit", "list", "--action", "master_key.rotated")["data"]
    assert event["tenant_id"] is None and event["actor"] == CLI
    assert event["target_id"] == rotated["key_id"]
    assert event["changes"] == {"resealed": rotated["resealed"], "skipped": rotated["skipped"]}
