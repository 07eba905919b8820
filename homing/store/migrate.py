"""Bring a database's schema up to date with the Alembic migrations, or check that it is.

Only ``homing migrate`` and the start-up of ``homing run``/``api``/``worker`` migrate.
Every other command works on the schema as it is and calls ``require_current`` first,
so a command never changes the schema behind the operator's back, and never runs
against one it was not written for.

Alembic (with Mako, about 10 MB of a process's memory) is imported only when the schema
is not at this version's head: a start against a current schema, every worker restart
but the first after an upgrade, reads the head from the revision files' own lines
(``_file_heads``) and ``alembic_version`` with one SELECT, and loads none of it.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from homing.errors import StoreError
from homing.store.database import Database
from homing.store.tables.columns import UTCDateTime

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

# Serialises migrations when several processes start against one PostgreSQL.
_ADVISORY_LOCK = 0x484F4D49

# A revision file's own identifiers, one per line as alembic writes them:
# ``revision = "0037"`` and ``down_revision = "0033"`` (or a tuple of them, or None).
_REVISION = re.compile(r'^revision(?:: [^=\n]*)? = "([^"\n]{1,64})"$', re.M)
_DOWN = re.compile(r"^down_revision(?:: [^=\n]*)? = ([^\n]{1,400})$", re.M)
_QUOTED = re.compile(r'"([^"\n]{1,64})"')


def _config() -> Config:
    from alembic.config import Config

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
    from alembic import command

    config = _config()
    config.attributes["connection"] = sync_connection
    command.upgrade(config, "head")


def _current(sync_connection: Connection) -> tuple[str, ...]:
    # Reads ``alembic_version`` if it exists; never creates it (alembic's own
    # MigrationContext.get_current_heads does the same read).
    if not inspect(sync_connection).has_table("alembic_version"):
        return ()
    rows = sync_connection.execute(text("SELECT version_num FROM alembic_version"))
    return tuple(sorted(str(row[0]) for row in rows))


@cache
def _file_heads() -> tuple[str, ...]:
    """This version's head revisions, read from the revision files' ``revision`` and
    ``down_revision`` lines without alembic (a revision no other names as its
    ``down_revision``); ``tests/store/test_migration_heads.py`` holds it to alembic's
    own answer. A file it cannot read makes it answer no head, and the callers then
    ask alembic."""
    revisions: set[str] = set()
    downs: set[str] = set()
    for entry in files("homing.migrations").joinpath("versions").iterdir():
        if not entry.name.endswith(".py") or entry.name == "__init__.py":
            continue
        source = entry.read_text(encoding="utf-8")
        revision, down = _REVISION.findall(source), _DOWN.findall(source)
        if len(revision) != 1 or len(down) != 1:
            return ()
        revisions.add(revision[0])
        downs.update(_QUOTED.findall(down[0]))
    return tuple(sorted(revisions - downs))


def _is_head(current: tuple[str, ...]) -> bool:
    heads = _file_heads()
    return len(heads) == 1 and current == heads


async def migrate(db: Database) -> None:
    """Run every pending migration in one transaction; with none pending, one read and
    no alembic."""
    async with db.transaction() as conn:
        if _is_head(await conn.run_sync(_current)):
            return
    async with db.transaction() as conn:
        if not db.is_sqlite:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _ADVISORY_LOCK})
        await conn.run_sync(_upgrade)


SchemaStatus = Literal["current", "behind", "unknown"]


def _scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config())


@cache
def _revisions() -> tuple[str | None, frozenset[str]]:
    # The revision files do not change while a process runs: parsed once.
    scripts = _scripts()
    return scripts.get_current_head(), frozenset(r.revision for r in scripts.walk_revisions())


async def schema_status(db: Database) -> SchemaStatus:
    """Where the schema stands against this version's head, without raising for it:
    ``current``, ``behind`` (older, or no schema yet) or ``unknown`` (a revision this
    version does not know, e.g. a newer homing's). One read of ``alembic_version``."""
    async with db.transaction() as conn:
        current = await conn.run_sync(_current)
    if _is_head(current):
        return "current"
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
    if _is_head(current):
        return
    scripts = _scripts()
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
