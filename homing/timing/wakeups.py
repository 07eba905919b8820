"""Wake idle workers when work arrives, with polling as the fallback.

In one process (the embedded default) the API's ``notify()`` sets an event the
workers wait on. On PostgreSQL, ``PostgresWakeups`` also carries it between
processes with LISTEN/NOTIFY on a dedicated connection: ``notify()`` sends one
NOTIFY (coalescing a burst into one), and every listening process wakes its workers.
The NOTIFY is sent after the accepting transaction committed, never inside it, so
it adds nothing to the hot accept path's locks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from homing.errors import StoreUnavailable
from homing.store.listen_notify import NotifyConnection
from homing.store.listen_notify import asyncpg_dsn as asyncpg_dsn

log = logging.getLogger("homing.wakeup")


class Wakeup:
    """Wakes idle workers when work is accepted: in process directly, across processes
    through the database's NOTIFY."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._publish: Callable[[], None] | None = None

    def notify(self) -> None:
        """New work: wake this process's workers, and others' where connected."""
        self._event.set()
        if self._publish is not None:
            self._publish()

    def wake_local(self) -> None:
        self._event.set()

    def publish_with(self, publish: Callable[[], None] | None) -> None:
        self._publish = publish

    async def wait(self, timeout: float) -> bool:
        """True when notified, False when the timeout passed first."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._event.wait()
        notified = self._event.is_set()
        self._event.clear()
        return notified


class PostgresWakeups:
    """LISTEN/NOTIFY between processes; reconnects in the background when cut off."""

    def __init__(self, dsn: str, wakeup: Wakeup, *, retry_seconds: float = 1.0) -> None:
        self._dsn = dsn
        self._wakeup = wakeup
        self._retry = retry_seconds
        self._conn: NotifyConnection | None = None
        self._task: asyncio.Task[None] | None = None
        self._sending: asyncio.Task[None] | None = None
        self._again = False

    async def start(self) -> None:
        """Connect and listen (best effort: polling still works if this fails)."""
        await self._connect()
        self._wakeup.publish_with(self._publish)
        self._task = asyncio.create_task(self._supervise())

    async def _connect(self) -> None:
        try:
            self._conn = await NotifyConnection.open(self._dsn, self._wakeup.wake_local)
        except StoreUnavailable as exc:
            cause = exc.__cause__
            log.warning("LISTEN connection failed; polling only", extra={"error": repr(cause)})

    async def _supervise(self) -> None:
        while True:
            await asyncio.sleep(self._retry)
            if self._conn is None or self._conn.is_closed():
                self._conn = None
                await self._connect()
                if self._conn is not None:
                    self._wakeup.wake_local()  # catch up on what was missed meanwhile

    def _publish(self) -> None:
        # One NOTIFY at a time on the connection; a burst meanwhile becomes one more.
        if self._sending is not None and not self._sending.done():
            self._again = True
            return
        self._sending = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        while True:
            self._again = False
            conn = self._conn
            if conn is not None and not conn.is_closed():
                try:
                    await conn.notify()
                except Exception as exc:  # a lost wake-up only delays work to the next poll
                    log.debug("NOTIFY failed", extra={"error": repr(exc)})
            if not self._again:
                return

    async def aclose(self) -> None:
        self._wakeup.publish_with(None)
        if self._sending is not None:
            # Closing the connection under an in-flight NOTIFY breaks its protocol state.
            await asyncio.gather(self._sending, return_exceptions=True)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._conn is not None:
            await self._conn.close()
