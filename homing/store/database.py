"""The engine, its transactions, and the boundary where driver errors become ours.

SQLite (the embedded default) runs in WAL mode with a busy timeout, and every
transaction goes through one connection opened with ``BEGIN IMMEDIATE``, so the API
accepting and the dispatcher claiming in one process never meet "database is locked".
PostgreSQL gets an ordinary pool.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
from sqlalchemy import event, text
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from homing.errors import StoreError, StoreUnavailable, UnstorableValue

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
        return create_async_engine(
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

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        """One transaction; committed when the block ends, rolled back on error."""
        try:
            async with self.engine.begin() as conn:
                yield conn
        except IntegrityError:
            raise
        except (OperationalError, InterfaceError, OSError) as exc:
            raise StoreUnavailable() from exc
        except DBAPIError as exc:
            sqlstate = str(getattr(exc.orig, "sqlstate", None) or "")
            if exc.connection_invalidated or sqlstate[:2] in _UNAVAILABLE_CLASSES:
                raise StoreUnavailable() from exc
            if sqlstate.startswith("22"):
                # SQLSTATE class 22, "data exception": a value from the request that the
                # database refuses (a NUL character in text, a number out of range).
                raise UnstorableValue() from exc
            raise StoreError(f"database error: {type(exc.orig).__name__}") from exc

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
            "PRAGMA synchronous=NORMAL",
            "PRAGMA foreign_keys=ON",
        ):
            cursor.execute(pragma)
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
