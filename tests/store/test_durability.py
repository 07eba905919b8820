"""A commit is on disk when it returns (docs/reliability.md, "Durability").

SQLite: every connection the engine opens, the first and any after a reconnect, syncs
its write-ahead log at each commit (``synchronous=FULL``; NORMAL syncs only at
checkpoints). PostgreSQL: a session whose ``synchronous_commit`` is off commits with
``local`` instead, and the process says so; a write the server refuses as read-only is
``storage_read_only`` (homing.store.storage).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.errors import StorageReadOnly
from homing.store.database import Database
from tests.fixtures import sqlite_url

FULL = 2  # PRAGMA synchronous: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA


async def _pragma(conn: AsyncConnection, name: str) -> object:
    return (await conn.execute(text(f"PRAGMA {name}"))).scalar_one()


async def test_every_sqlite_connection_syncs_the_wal_at_each_commit(tmp_path: Path) -> None:
    db = Database(sqlite_url(tmp_path))
    try:
        for _ in range(2):  # the first connection, then one opened after a reconnect
            async with db.transaction() as conn:
                assert await _pragma(conn, "journal_mode") == "wal"
                assert await _pragma(conn, "synchronous") == FULL
            async with db.engine.connect() as conn:
                await conn.invalidate()  # as a broken connection is: the pool opens another
    finally:
        await db.dispose()


@pytest.mark.postgres
async def test_postgres_commits_durably_when_the_database_says_synchronous_commit_off(
    postgres_url: str, log_stream: io.StringIO
) -> None:
    name = postgres_url.rsplit("/", 1)[1]
    admin = Database(postgres_url)
    async with admin.transaction() as conn:
        await conn.execute(text(f'ALTER DATABASE "{name}" SET synchronous_commit = off'))
    db = Database(postgres_url)
    try:
        async with db.transaction() as conn:
            setting = (await conn.execute(text("SHOW synchronous_commit"))).scalar_one()
        assert setting == "local"
    finally:
        await db.dispose()
        async with admin.transaction() as conn:
            await conn.execute(text(f'ALTER DATABASE "{name}" RESET synchronous_commit'))
        await admin.dispose()
    lines = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    assert [r["setting"] for r in lines if r["level"] == "warning"] == ["synchronous_commit"]


@pytest.mark.postgres
async def test_a_write_postgres_refuses_as_read_only_is_storage_read_only(
    postgres_url: str, log_stream: io.StringIO
) -> None:
    db = Database(postgres_url)
    try:
        with pytest.raises(StorageReadOnly):
            async with db.transaction() as conn:
                # As on a standby, or with default_transaction_read_only: SQLSTATE 25006.
                await conn.execute(text("SET TRANSACTION READ ONLY"))
                await conn.execute(text("CREATE TABLE never_made (n int)"))
        assert db.storage.now() is StorageReadOnly  # remembered for /readyz a while
    finally:
        await db.dispose()
    lines = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    [warning] = [r for r in lines if r["level"] == "warning"]
    assert (warning["cause"], warning["database"]) == ("storage_read_only", "postgresql")
    assert "folder" not in warning and postgres_url not in log_stream.getvalue()
