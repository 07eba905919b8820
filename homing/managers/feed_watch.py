"""The one poll of a process's open feed streams (docs/feed.md, "The stream").

Items and marks another process writes reach this process's streams through this
poll: every HOMING_FEED_POLL_SECONDS one read for all of them (a statement per 500
recipients, and one for the tenants' feed secrets), however many streams are open.
A recipient whose newest sequence number or unread count changed since the last round
(or that the poll sees for the first time) has its streams woken, and they read what
came; a tenant whose feed secret changed has all its streams woken, and each checks
its token against the new secret. An idle stream reads nothing itself.
"""

from __future__ import annotations

import asyncio
import logging

from homing.errors import StoreError
from homing.managers.feed_streams import FeedStreams, StreamKey
from homing.metrics import FEED_READS
from homing.store.feed import FeedStore

__all__ = ["FeedWatch"]

log = logging.getLogger("homing.feed")


class FeedWatch:
    """Polls the feeds of this process's open streams while there are any."""

    def __init__(self, store: FeedStore, streams: FeedStreams, seconds: float) -> None:
        self._store = store
        self._streams = streams
        self._seconds = seconds
        self._feeds: dict[StreamKey, tuple[int, int]] = {}
        self._secrets: dict[str, str | None] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Poll from now on while a stream is open (called as one opens); a no-op
        while the poll runs."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self._streams.open_count and not self._streams.ending:
            await asyncio.sleep(self._seconds)
            try:
                await self.round()
            except StoreError as exc:
                log.warning("feed poll failed", extra={"error": str(exc)})
            except Exception:  # the poll must outlive any one failed round
                log.exception("feed poll failed unexpectedly")
        self._feeds.clear()
        self._secrets.clear()

    async def round(self) -> None:
        """One poll: wake the streams of every recipient whose feed changed, and of
        every tenant whose feed secret changed, since the last round."""
        keys = self._streams.keys()
        if not keys:
            return
        FEED_READS.labels("poll").inc()
        signals = await self._store.signals(keys)
        feeds = {key: signals.feeds.get(key, (0, 0)) for key in keys}
        for key, state in feeds.items():
            # First seen, or changed: the streams read (a first read of its own may
            # have come before an item this round's statement saw already).
            if self._feeds.get(key) != state:
                self._streams.notify(key)
        secrets = {tenant: signals.secrets.get(tenant) for tenant, _ in keys}
        for tenant, sealed in secrets.items():
            if tenant in self._secrets and self._secrets[tenant] != sealed:
                self._streams.notify_tenant(tenant)
        self._feeds, self._secrets = feeds, secrets
