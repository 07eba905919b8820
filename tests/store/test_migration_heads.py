"""A start against a current schema loads no alembic: ``homing.store.migrate`` reads
this version's head from the revision files' own lines, which must agree with alembic's
graph, and ``alembic_version`` with one SELECT (about 10 MB of every process's memory
saved; docs/benchmarks.md's worker RSS)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from alembic.config import Config
from alembic.script import ScriptDirectory

from homing.store.migrate import _file_heads
from tests.fixtures import sqlite_url

_PROBE = """
import asyncio, sys
from homing.store.database import Database
from homing.store.migrate import migrate, require_current, schema_status

async def main(url):
    db = Database(url)
    try:
        await migrate(db)
        await require_current(db)
        print(await schema_status(db), "alembic" in sys.modules, "mako" in sys.modules)
    finally:
        await db.dispose()

asyncio.run(main(sys.argv[1]))
"""


def test_the_heads_read_from_the_files_are_alembics() -> None:
    config = Config()
    config.set_main_option("script_location", "homing:migrations")
    assert _file_heads() == tuple(sorted(ScriptDirectory.from_config(config).get_heads()))


def test_a_current_schema_is_checked_and_migrated_without_importing_alembic(
    database_url: str,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, database_url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["current", "False", "False"]


def test_an_empty_database_is_still_migrated_by_alembic(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, sqlite_url(tmp_path, "empty.db")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["current", "True", "True"]
