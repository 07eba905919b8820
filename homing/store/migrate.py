"""Bring a database's schema up to date with the Alembic migrations, or check that it is.

Only ``homing migrate`` and the start-up of ``homing run``/``api``/``worker`` migrate.
Every other command works on the schema as it is and calls ``require_current`` first,
so a command never changes the schema behind the operator's back, and never runs
against one it was not written for.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text

from homing.errors import StoreError
from homing.store.database import Database
from homing.store.tables.columns import UTCDateTime

# Serialises migrations when several processes start against one PostgreSQL.
_ADVISORY_LOCK = 0x484F4D49


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", "homing:migrations")
    return config


def render_item(type_: str, obj: Any, autogen_context: Any) -> str | Literal[False]:
    """Autogenerate renders ``UTCDateTime`` from the migrations' frozen copy.

    A revision written by ``alembic revision --autogenerate`` then imports
    ``homing.migrations.types``, never ``homing.store`` (which may change)."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        autogen_context.imports.add("from homing.migrations.types import UTCDateTime")
        return "UTCDateTime()"
    return False


def _upgrade(sync_connection: Any) -> None:
    config = _config()
    config.attributes["connection"] = sync_connection
    command.upgrade(config, "head")


def _current(sync_connection: Any) -> tuple[str, ...]:
    # Reads ``alembic_version`` if it exists; never creates it.
    return tuple(MigrationContext.configure(sync_connection).get_current_heads())


async def migrate(db: Database) -> None:
    """Run every pending migration in one transaction."""
    async with db.transaction() as conn:
        if not db.is_sqlite:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _ADVISORY_LOCK})
        await conn.run_sync(_upgrade)


SchemaStatus = Literal["current", "behind", "unknown"]


@cache
def _revisions() -> tuple[str | None, frozenset[str]]:
    # The revision files do not change while a process runs: parsed once.
    scripts = ScriptDirectory.from_config(_config())
    return scripts.get_current_head(), frozenset(r.revision for r in scripts.walk_revisions())


async def schema_status(db: Database) -> SchemaStatus:
    """Where the schema stands against this version's head, without raising for it:
    ``current``, ``behind`` (older, or no schema yet) or ``unknown`` (a revision this
    version does not know, e.g. a newer homing's). One read of ``alembic_version``."""
    async with db.transaction() as conn:
        current = await conn.run_sync(_current)
    head, known = _revisions()
    if current == (head,):
        return "current"
    return "unknown" if not set(current) <= known else "behind"


async def require_current(db: Database) -> None:
    """Raise ``StoreError`` saying "run `homing migrate`" unless the schema is current.

    Current means the database is at this version's one head revision. The check only
    reads: a database without a schema stays without one."""
    async with db.transaction() as conn:
        current = await conn.run_sync(_current)
    scripts = ScriptDirectory.from_config(_config())
    head = scripts.get_current_head()
    if current == (head,):
        return
    if not current:
        raise StoreError("the database has no schema yet: run `homing migrate`")
    known = {revision.revision for revision in scripts.walk_revisions()}
    at = ", ".join(sorted(current))
    if not set(current) <= known:
        raise StoreError(
            f"the database schema is at revision {at}, which this version of homing does "
            "not know (was it migrated by a newer homing?)"
        )
    raise StoreError(
        f"the database schema is behind this version of homing (at {at}, needs {head}): "
        "run `homing migrate`"
    )
