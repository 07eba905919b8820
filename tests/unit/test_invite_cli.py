"""``homing user invite``: an invitation from the command line, its link printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from homing.cli import main
from tests.fixtures import migrated_cli_env


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    migrated_cli_env(monkeypatch, tmp_path, capsys, clear=("HOMING_PUBLIC_URL",))


def _tenant(capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["tenant", "create", "Acme"]) == 0
    tenant_id: str = json.loads(capsys.readouterr().out)["tenant_id"]
    return tenant_id


def _invite(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["user", "invite", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_user_invite_prints_the_link_at_the_public_url_and_records_the_cli(
    cli: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tenant_id = _tenant(capsys)
    monkeypatch.setenv("HOMING_PUBLIC_URL", "https://homing.example.com/")
    code, out, err = _invite(
        capsys, "--tenant", tenant_id, "--email", "Ada@Example.com", "--role", "owner"
    )
    assert code == 0, err
    made = json.loads(out)
    assert made["email"] == "ada@example.com" and made["role"] == "owner"
    assert made["tenant_id"] == tenant_id and made["mailed"] is False
    assert made["link"].startswith("https://homing.example.com/invitations/")
    assert len(made["link"].rpartition("/")[2]) >= 43
    assert main(["audit", "list", "--action", "user.invited"]) == 0
    [event] = json.loads(capsys.readouterr().out)["data"]
    assert event["actor"]["kind"] == "cli" and event["target_id"] == made["invitation_id"]
    assert made["link"].rpartition("/")[2] not in json.dumps(event)


def test_user_invite_without_a_public_url_uses_the_api_address_and_refuses_bad_input(
    cli: None, capsys: pytest.CaptureFixture[str]
) -> None:
    tenant_id = _tenant(capsys)
    code, out, _ = _invite(capsys, "--tenant", tenant_id, "--email", "b@example.com")
    assert code == 0
    made = json.loads(out)
    assert made["link"].startswith("http://127.0.0.1:8000/invitations/")
    assert made["role"] == "viewer"
    unknown, _, err = _invite(
        capsys, "--tenant", "0190c0de-0000-7000-8000-000000000000", "--email", "c@example.com"
    )
    assert unknown == 2 and "tenant not found" in err
    bad, _, err = _invite(capsys, "--tenant", tenant_id, "--email", "not an email")
    assert bad == 2 and "one email address" in err
