"""The test databases of ``tests/conftest.py``: each test's is handed over migrated,
from a schema the process built once (a template file copied on SQLite, the process's
own database on PostgreSQL), so no test's setup runs the migrations again. The
migrations themselves run from empty in ``test_migration_schema.py``."""

from __future__ import annotations

from sqlalchemy import text

from homing.store.database import Database
from homing.store.migrate import schema_status


async def test_a_test_database_is_current_before_anything_builds_on_it(
    database_url: str,
) -> None:
    db = Database(database_url)
    try:
        assert await schema_status(db) == "current"
        if db.is_sqlite:
            # A copy of its own: empty, whatever another test wrote to its copy.
            async with db.transaction() as conn:
                count = await conn.scalar(text("SELECT count(*) FROM tenants"))
            assert count == 0
    finally:
        await db.dispose()
