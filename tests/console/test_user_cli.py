"""``homing user add``: members and operators from the command line, each recorded as
one ``user.added`` event in the transaction that adds the user (issue #22, item 7)."""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path

import httpx
import pytest

from homing.cli import main
from tests.admission_helpers import ADMIN, ADMIN_TOKEN
from tests.console_helpers import PASSWORD
from tests.console_processes import api_processes
from tests.fixtures import migrated_cli_env

UNKNOWN_TENANT = "0190c0de-0000-7000-8000-000000000000"


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


def test_user_add_records_one_event_and_an_unknown_tenant_leaves_no_user(
    cli: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The commands run in this process (``python -m homing user add`` as a process,
    stdin and all, is tests/adversary/test_sign_in_guessing's); what they stored is read
    back by a ``homing api`` process on their database."""
    assert main(["tenant", "create", "acme"]) == 0
    tenant_id = json.loads(capsys.readouterr().out)["tenant_id"]
    added = [
        _run(monkeypatch, capsys, PASSWORD + "\n", "user", "add", *args, "--password-stdin")
        for args in (
            ("ada@example.com", "--tenant", tenant_id, "--role", "owner"),
            ("ops@example.com", "--operator"),
            ("bob@example.com", "--tenant", UNKNOWN_TENANT),
        )
    ]
    (owner, _, owner_err), (operator, operator_out, operator_err), (unknown, _, unknown_err) = added
    assert (owner, operator) == (0, 0), owner_err + operator_err
    assert unknown == 2 and "tenant not found" in unknown_err
    made = {json.loads(out)["email"]: json.loads(out) for _, out, _ in added[:2]}
    assert json.loads(operator_out)["operator"] is True
    env = {name: os.environ[name] for name in os.environ if name.startswith("HOMING_")}
    env["HOMING_ADMIN_TOKEN"] = ADMIN_TOKEN
    listed, ada_in, bob_in = asyncio.run(_read_back(env, tmp_path))
    # The refused add left no user behind that could sign in.
    assert (listed.status_code, ada_in.status_code, bob_in.status_code) == (200, 303, 401)
    *events, created = listed.json()["data"]
    assert [e["action"] for e in events] == ["user.added"] * 2  # and none for the refused one
    assert created["action"] == "tenant.created"
    by_email = {e["changes"]["email"]: e for e in events}
    assert sorted(by_email) == sorted(made)
    ada, ops = by_email["ada@example.com"], by_email["ops@example.com"]
    assert ada["tenant_id"] == tenant_id and ada["target_id"] == made["ada@example.com"]["user_id"]
    assert ada["changes"] == {"email": "ada@example.com", "operator": False, "role": "owner"}
    assert ops["tenant_id"] is None and ops["target_id"] == made["ops@example.com"]["user_id"]
    assert ops["changes"] == {"email": "ops@example.com", "operator": True, "role": None}
    assert {e["actor"]["kind"] for e in events} == {"cli"}
    assert PASSWORD not in listed.text


async def _read_back(
    env: dict[str, str], log_dir: Path
) -> tuple[httpx.Response, httpx.Response, httpx.Response]:
    """From a ``homing api`` process on ``env``: the audit log, then Ada's and Bob's
    sign-ins."""
    async with api_processes(env, log_dir) as (url,), httpx.AsyncClient(base_url=url) as api:
        listed = await api.get("/admin/v1/audit-log", headers=ADMIN)
        ada_in = await api.post("/sign-in", data={"email": "ada@example.com", "password": PASSWORD})
        bob_in = await api.post("/sign-in", data={"email": "bob@example.com", "password": PASSWORD})
    return listed, ada_in, bob_in
