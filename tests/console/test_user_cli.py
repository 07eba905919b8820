"""``homing user add``: members and operators from the command line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from homing.cli import main
from tests.fixtures import migrated_cli_env


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    migrated_cli_env(monkeypatch, tmp_path, capsys)


def _run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], stdin: str, *argv: str
) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_user_add_makes_a_member_and_an_operator_and_never_prints_the_password(
    cli: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tenant", "create", "Acme"]) == 0
    tenant_id = json.loads(capsys.readouterr().out)["tenant_id"]
    secret = "a long enough password\n"
    code, out, err = _run(
        monkeypatch,
        capsys,
        secret,
        "user",
        "add",
        "Ada@Example.com",
        "--tenant",
        tenant_id,
        "--role",
        "owner",
        "--password-stdin",
    )
    assert code == 0, err
    made = json.loads(out)
    assert made["email"] == "ada@example.com" and made["role"] == "owner"
    assert made["tenant_id"] == tenant_id and made["operator"] is False
    code, out, _ = _run(
        monkeypatch,
        capsys,
        secret,
        "user",
        "add",
        "ops@example.com",
        "--operator",
        "--password-stdin",
    )
    assert code == 0 and json.loads(out)["operator"] is True
    assert "a long enough password" not in out
    again, _, err = _run(
        monkeypatch,
        capsys,
        secret,
        "user",
        "add",
        "ada@example.com",
        "--operator",
        "--password-stdin",
    )
    assert again == 2 and "exists already" in err


def test_user_add_refuses_a_short_password_and_an_unknown_tenant(
    cli: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    short, _, err = _run(
        monkeypatch,
        capsys,
        "short\n",
        "user",
        "add",
        "a@example.com",
        "--operator",
        "--password-stdin",
    )
    assert short == 2 and "between 12 and 256" in err
    unknown, _, err = _run(
        monkeypatch,
        capsys,
        "a long enough password\n",
        "user",
        "add",
        "b@example.com",
        "--tenant",
        "0190c0de-0000-7000-8000-000000000000",
        "--password-stdin",
    )
    assert unknown == 2 and "tenant not found" in err
