"""The engine, its transactions, and the boundary where driver errors become ours.

SQLite (the embedded default) runs in WAL mode with a busy timeout, and every
transaction goes through one connection opened with ``BEGIN IMMEDIATE``, so the API
accepting and the dispatcher claiming in one process never meet "database is locked".
PostgreSQL gets an ordinary pool.

A commit is on disk when it returns, so a 202 is (docs/reliability.md, "Durability"):
SQLite runs with ``synchronous=FULL``, which syncs the write-ahead log at every commit
(``NORMAL`` syncs it only at checkpoints, and an OS crash or power loss can undo the
commits since); group commit (``homing.store.accepting``) shares that sync among the
accepts waiting together. On PostgreSQL a session whose ``synchronous_commit`` is
``off`` sets it to ``local`` (``homing.store.durability``).

A write refused by the storage itself (disk full, read-only, permission denied) is its
own ``StoreUnavailable`` subclass, logged and remembered (``homing.store.storage``).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import event, make_url, text
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from homing.errors import StoreError, StoreUnavailable, UnstorableValue
from homing.store.durability import configure_postgres
from homing.store.storage import (
    StorageCause,
    StorageWatch,
    cause_of_oserror,
    postgres_cause,
    sqlite_cause,
)

# SQLSTATE classes that mean "the server cannot serve now", not "this request is wrong":
# 08 connection exception, 53 insufficient resources, 57 operator intervention (the
# server shutting down or starting up, a terminated connection).
_UNAVAILABLE_CLASSES = frozenset({"08", "53", "57"})


def _json_dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


class Database:
    """Owns the engine. ``transaction()`` is the only way in."""

    def __init__(self, url: str, *, pool_size: int = 10) -> None:
        self.url = url
        self.dialect = "sqlite" if url.startswith("sqlite") else "postgresql"
        self.engine = self._create_engine(url, pool_size)
        self.file = _sqlite_file(url) if self.is_sqlite else None
        self.storage = StorageWatch(self.dialect, self.file, time.monotonic)

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    def _create_engine(self, url: str, pool_size: int) -> AsyncEngine:
        common: dict[str, Any] = {
            "json_serializer": _json_dumps,
            "json_deserializer": orjson.loads,
        }
        if url.startswith("sqlite"):
            engine = create_async_engine(
                url, pool_size=1, max_overflow=0, pool_timeout=60, **common
            )
            _configure_sqlite(engine)
            return engine
        engine = create_async_engine(
            url,
            pool_size=pool_size,
            # No overflow: under a burst, a connection opened and closed per transaction
            # (a fork and a TLS attempt on the server) costs more than waiting for one.
            max_overflow=0,
            # No pre-ping: it costs a round trip per transaction. A connection that
            # died with the server fails its next use; that transaction ends as
            # StoreUnavailable (503, or a retried claim) and the pool replaces it.
            pool_pre_ping=False,
            pool_timeout=30,
            **common,
        )
        configure_postgres(engine)
        return engine

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        """One transaction; committed when the block ends, rolled back on error."""
        try:
            async with self.engine.begin() as conn:
                yield conn
        except IntegrityError:
            raise
        except (OperationalError, InterfaceError, OSError) as exc:
            raise self._unavailable(exc) from exc
        except DBAPIError as exc:
            sqlstate = str(getattr(exc.orig, "sqlstate", None) or "")
            if postgres_cause(sqlstate) is not None:
                raise self._unavailable(exc) from exc
            if exc.connection_invalidated or sqlstate[:2] in _UNAVAILABLE_CLASSES:
                raise StoreUnavailable() from exc
            if sqlstate.startswith("22"):
                # SQLSTATE class 22, "data exception": a value from the request that the
                # database refuses (a NUL character in text, a number out of range).
                raise UnstorableValue() from exc
            raise StoreError(f"database error: {type(exc.orig).__name__}") from exc

    def _unavailable(self, exc: Exception) -> StoreUnavailable:
        """The error for a database that cannot serve: its storage's cause, logged and
        remembered, when the driver's error names one."""
        cause = self._storage_cause(exc)
        if cause is None:
            return StoreUnavailable()
        self.storage.met(cause)
        return cause()

    def _storage_cause(self, exc: Exception) -> StorageCause | None:
        if isinstance(exc, OSError):
            return cause_of_oserror(exc)
        orig = getattr(exc, "orig", None)
        if self.file is not None:
            return sqlite_cause(orig, self.file) if orig is not None else None
        return postgres_cause(str(getattr(orig, "sqlstate", None) or ""))

    async def ping(self) -> None:
        """Ask the database for ``SELECT 1``; StoreUnavailable when it does not answer."""
        async with self.transaction() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        await self.engine.dispose()


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from the driver so BEGIN IMMEDIATE is ours.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in (
            "PRAGMA journal_mode=WAL",
            "PRAGMA busy_timeout=30000",
            # Sync the write-ahead log at every commit: a commit survives an OS crash
            # or power loss (NORMAL syncs only at checkpoints).
            "PRAGMA synchronous=FULL",
            "PRAGMA foreign_keys=ON",
        ):
            cursor.execute(pragma)
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def _sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL; None for an in-memory database."""
    name = make_url(url).database
    return None if not name or name == ":memory:" else Path(name).resolve()
