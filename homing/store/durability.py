"""PostgreSQL settings that would make a committed accept a lie, checked per connection.

A 202 means the job is on disk (docs/reliability.md, "Durability"). Two server
settings break that:

- ``synchronous_commit=off``: COMMIT returns before the WAL is flushed, so a server
  crash loses the last commits. Any session may set its own, so each of Homing's sets
  ``local`` (flush this server's WAL; wait for no standby), and the first connection of
  a process logs a warning that it did. Other values (``local``, ``on``,
  ``remote_write``, ``remote_apply``) flush locally and are left as they are.
- ``fsync=off``: the server never flushes at all. No session can change that, so the
  first connection of a process logs a warning naming it, and Homing runs on.

One statement per new connection (pooled connections live long), none per transaction.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["READ_SETTINGS", "configure_postgres"]

log = logging.getLogger("homing.store")

# One round trip: the server's fsync, and the session's synchronous_commit, raised to
# ``local`` in the same statement when it is ``off`` (set_config answers the new value).
READ_SETTINGS = (
    "SELECT current_setting('fsync'),"
    " CASE WHEN current_setting('synchronous_commit') = 'off'"
    " THEN set_config('synchronous_commit', 'local', false) END"
)


def configure_postgres(engine: AsyncEngine) -> None:
    """Make every new connection of ``engine`` commit durably, warning once per process
    about what it finds (see the module's docstring)."""
    warned: set[str] = set()

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Through the driver adapter, so a failure is a DBAPI error the transaction's
        # boundary translates (StoreUnavailable); committed, so the session setting
        # outlives this first transaction.
        cursor = dbapi_connection.cursor()
        cursor.execute(READ_SETTINGS)
        fsync, raised = cursor.fetchone()
        cursor.close()
        dbapi_connection.commit()
        if fsync == "off" and "fsync" not in warned:
            warned.add("fsync")
            log.warning(
                "PostgreSQL runs with fsync=off: a server crash or power loss can lose "
                "accepted jobs; a 202 is not on disk (docs/reliability.md, Durability)",
                extra={"setting": "fsync"},
            )
        if raised is not None and "synchronous_commit" not in warned:
            warned.add("synchronous_commit")
            log.warning(
                "PostgreSQL's synchronous_commit is off for Homing's role or database; "
                "Homing's sessions set it to local, so a 202 is on disk",
                extra={"setting": "synchronous_commit"},
            )
