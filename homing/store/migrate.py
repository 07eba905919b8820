"""Bring a database's schema up to date with the Alembic migrations."""

from __future__ import annotations

from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import text

from homing.store.database import Database

# Serialises migrations when several processes start against one PostgreSQL.
_ADVISORY_LOCK = 0x484F4D49


def _upgrade(sync_connection: Any) -> None:
    config = Config()
    config.set_main_option("script_location", "homing:migrations")
    config.attributes["connection"] = sync_connection
    command.upgrade(config, "head")


async def migrate(db: Database) -> None:
    """Run every pending migration in one transaction."""
    async with db.transaction() as conn:
        if not db.is_sqlite:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _ADVISORY_LOCK})
        await conn.run_sync(_upgrade)
