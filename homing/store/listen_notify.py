"""LISTEN/NOTIFY on PostgreSQL: the SQL behind the wake-ups between processes.

``homing.timing.wakeups`` decides when to notify and coalesces bursts; this module owns
the dedicated connection, its ``LISTEN`` and the ``NOTIFY`` it sends. Driver errors
become ``StoreUnavailable`` here, at the store boundary.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url

from homing.errors import StoreUnavailable

__all__ = ["CHANNEL", "NotifyConnection", "asyncpg_dsn"]

CHANNEL = "homing_jobs"


def asyncpg_dsn(sqlalchemy_url: str) -> str:
    """The asyncpg DSN of a SQLAlchemy PostgreSQL URL (its driver name dropped)."""
    return (
        make_url(sqlalchemy_url).set(drivername="postgresql").render_as_string(hide_password=False)
    )


class NotifyConnection:
    """One connection that listens on ``CHANNEL`` and sends ``NOTIFY`` on it."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    @classmethod
    async def open(
        cls, dsn: str, on_notify: Callable[[], None], *, timeout: float = 5
    ) -> NotifyConnection:
        """Connect and LISTEN; ``on_notify`` runs for every notification received.
        StoreUnavailable when the server cannot be reached."""

        def listener(*_args: Any) -> None:
            on_notify()

        try:
            conn = await asyncpg.connect(dsn, timeout=timeout)
            await conn.add_listener(CHANNEL, listener)
        except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
            raise StoreUnavailable() from exc
        return cls(conn)

    def is_closed(self) -> bool:
        return bool(self._conn.is_closed())

    async def notify(self) -> None:
        """Send one NOTIFY to every listening process."""
        await self._conn.execute(f"NOTIFY {CHANNEL}")

    async def close(self) -> None:
        if not self._conn.is_closed():
            await self._conn.close()
