"""Only ``homing migrate`` and the start-up of ``run``/``api``/``worker`` migrate. Every
other command works on the schema as it is: against a database that is not current it
changes nothing and exits 2 saying "run `homing migrate`"."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine

from tests.processes import HomingProcess

OLD_HEADS = ("0002", "0003", "0004", "0005")


def _homing(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "HOMING_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'homing.db'}",
        "HOMING_DATA_DIR": str(tmp_path / "data"),
        "HOMING_LOG_LEVEL": "error",
    }
    return subprocess.run(
        [sys.executable, "-m", "homing", *args],
        env=HomingProcess([], env, tmp_path / "cli.log").env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _tables(tmp_path: Path) -> set[str]:
    path = tmp_path / "homing.db"
    if not path.exists():
        return set()
    with sqlite3.connect(path) as db:
        return {name for (name,) in db.execute("SELECT name FROM sqlite_master")}


def test_tenant_list_on_an_empty_database_creates_nothing_and_says_run_migrate(
    tmp_path: Path,
) -> None:
    listed = _homing(tmp_path, "tenant", "list")
    assert listed.returncode == 2
    assert listed.stdout == ""
    assert "run `homing migrate`" in listed.stderr
    assert _tables(tmp_path) == set()


def test_tenant_list_works_once_migrated(tmp_path: Path) -> None:
    assert _homing(tmp_path, "migrate").returncode == 0
    assert "tenants" in _tables(tmp_path)
    listed = _homing(tmp_path, "tenant", "list")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == {"data": [], "next_cursor": None}


def _at_old_heads(tmp_path: Path) -> None:
    """A database as the code before the merge revision left it: four heads."""
    config = Config()
    config.set_main_option("script_location", "homing:migrations")
    engine = create_engine(f"sqlite:///{tmp_path / 'homing.db'}")
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        for head in OLD_HEADS:
            command.upgrade(config, head)
    engine.dispose()


def test_a_writing_command_refuses_a_schema_behind_and_leaves_it_behind(
    tmp_path: Path,
) -> None:
    _at_old_heads(tmp_path)
    created = _homing(tmp_path, "tenant", "create", "acme")
    assert created.returncode == 2
    assert created.stdout == ""
    assert "behind" in created.stderr
    assert "run `homing migrate`" in created.stderr
    assert "tenant_settings" not in _tables(tmp_path)  # 0007 did not run
    assert _homing(tmp_path, "migrate").returncode == 0
    assert _homing(tmp_path, "tenant", "create", "acme").returncode == 0
