"""The schema the migrations build is the metadata, on SQLite and PostgreSQL, compared
the way ``alembic check`` does; and a database made before the merge revision (four
heads, 0002-0005) upgrades to head with its rows intact.

Compared: tables, columns, types (``compare_type``), nullability, server defaults
(``compare_server_default``: the three the metadata declares, and none elsewhere),
primary keys, foreign keys, unique constraints and indexes (by name and columns;
Alembic does not compare a partial index's WHERE, so ``test_partial_indexes_match``
does that).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import bindparam, inspect, select, text

from homing.store.database import Database
from homing.store.migrate import migrate
from homing.store.tables.core import UTCDateTime, jobs, metadata, queue_entries, tenants
from tests.conftest import POSTGRES_URL

# The heads a database made by the code before the merge (commit 51f7b1d) is at.
OLD_HEADS = ("0002", "0003", "0004", "0005")
TENANT = "0194d1c0-0000-7000-8000-000000000001"
JOB = "0194d1c0-0000-7000-8000-000000000002"
AT = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
_names = itertools.count()


def _admin_dsn() -> str:
    return POSTGRES_URL.replace("postgresql+asyncpg://", "postgresql://")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def empty_db(
    request: pytest.FixtureRequest, tmp_path: Path, worker_id: str
) -> AsyncIterator[Database]:
    """A database with no tables at all: a file of its own, or a PostgreSQL database
    of its own (the shared per-process test database is already migrated)."""
    if request.param == "sqlite":
        db = Database(f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}")
        yield db
        await db.engine.dispose()
        return
    name = f"homing_migration_{worker_id}_{os.getpid()}_{next(_names)}"
    admin = await asyncpg.connect(_admin_dsn())
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
        db = Database(f"{POSTGRES_URL.rpartition('/')[0]}/{name}")
        yield db
        await db.engine.dispose()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


def _differences(sync_connection: Any) -> list[Any]:
    context = MigrationContext.configure(
        sync_connection, opts={"compare_type": True, "compare_server_default": True}
    )
    return list(compare_metadata(context, metadata))


def _heads(sync_connection: Any) -> tuple[str, ...]:
    return tuple(sorted(MigrationContext.configure(sync_connection).get_current_heads()))


def _code_head() -> str:
    config = Config()
    config.set_main_option("script_location", "homing:migrations")
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None
    return head


async def _assert_schema_is_the_metadata(db: Database) -> None:
    async with db.transaction() as conn:
        assert await conn.run_sync(_differences) == []
        assert await conn.run_sync(_heads) == (_code_head(),)


async def test_migrations_build_exactly_the_metadata(empty_db: Database) -> None:
    await migrate(empty_db)
    await _assert_schema_is_the_metadata(empty_db)


def _partial_indexes(sync_connection: Any) -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    inspector = inspect(sync_connection)
    for table in metadata.tables:
        for index in inspector.get_indexes(table):
            options = index.get("dialect_options", {})
            where = options.get("postgresql_where") or options.get("sqlite_where")
            if where is not None:
                found[(table, index["name"] or "")] = _normalised(str(where))
    return found


def _normalised(predicate: str) -> str:
    # PostgreSQL answers "((status)::text <> 'SUPPRESSED'::text)"; the metadata says
    # "status <> 'SUPPRESSED'".
    return predicate.replace("::text", "").replace("(", "").replace(")", "").strip().lower()


async def test_partial_indexes_match(empty_db: Database) -> None:
    await migrate(empty_db)
    dialect = "sqlite" if empty_db.is_sqlite else "postgresql"
    expected = {
        (table.name, str(index.name)): _normalised(str(index.dialect_options[dialect]["where"]))
        for table in metadata.tables.values()
        for index in table.indexes
        if index.dialect_options[dialect]["where"] is not None
    }
    assert len(expected) == 7  # 0012 adds ix_jobs_unscrubbed, 0039 three more
    async with empty_db.transaction() as conn:
        assert await conn.run_sync(_partial_indexes) == expected


def _upgrade_to_old_heads(sync_connection: Any) -> None:
    config = Config()
    config.set_main_option("script_location", "homing:migrations")
    config.attributes["connection"] = sync_connection
    # The code before the merge ran ``upgrade heads``: each of the four branches.
    for head in OLD_HEADS:
        command.upgrade(config, head)


async def _make_old_database(db: Database) -> None:
    async with db.transaction() as conn:
        await conn.run_sync(_upgrade_to_old_heads)
        assert await conn.run_sync(_heads) == OLD_HEADS
        # Written as the old code wrote them: only columns that existed before 0006.
        at = bindparam("at", AT, type_=UTCDateTime)
        await conn.execute(
            text(
                "INSERT INTO tenants (id, name, plan, suspended, created_at) "
                "VALUES (:id, 'acme', 'STARTUP', false, :at)"
            ).bindparams(at),
            {"id": TENANT},
        )
        await conn.execute(
            text(
                "INSERT INTO jobs (id, tenant_id, channel, queue, status, priority, payload,"
                " delivery, attempts_made, skipped_providers, created_at, updated_at, test)"
                " VALUES (:id, :tenant, 'email', 'email', 'QUEUED', 5, '{}', 'at_least_once',"
                " 0, '[]', :at, :at, false)"
            ).bindparams(at),
            {"id": JOB, "tenant": TENANT},
        )
        await conn.execute(
            text(
                "INSERT INTO queue_entries (job_id, tenant_id, queue, priority, available_at,"
                " attempts, deferred_seconds, created_at)"
                " VALUES (:id, :tenant, 'email', 5, 1.5, 0, 0, 1.5)"
            ),
            {"id": JOB, "tenant": TENANT},
        )


async def test_a_database_from_before_the_merge_upgrades_with_its_rows(
    empty_db: Database,
) -> None:
    await _make_old_database(empty_db)
    await migrate(empty_db)
    await _assert_schema_is_the_metadata(empty_db)
    async with empty_db.transaction() as conn:
        tenant = (await conn.execute(select(tenants.c.name, tenants.c.created_at))).one()
        job = (await conn.execute(select(jobs.c.id, jobs.c.status, jobs.c.test))).one()
        entry = (
            await conn.execute(select(queue_entries.c.job_id, queue_entries.c.provider_calls))
        ).one()
    assert tuple(tenant) == ("acme", AT)
    assert tuple(job) == (JOB, "QUEUED", False)
    # 0009's column arrived with its server default on the existing row.
    assert tuple(entry) == (JOB, 0)


async def test_migrating_twice_changes_nothing(empty_db: Database) -> None:
    await migrate(empty_db)
    await migrate(empty_db)
    await _assert_schema_is_the_metadata(empty_db)
