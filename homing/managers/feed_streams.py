"""Open feed streams of this process (docs/feed.md, "The stream"): their bounds, and
the wake-up the write path gives the streams of a recipient.

A stream waits on its own event; ``notify`` sets the events of the recipient's
streams and returns at once, so a send never waits for a reader. A stream also polls
(HOMING_FEED_POLL_SECONDS, at most a second), so an item another process wrote
arrives too. A graceful stop ends them all (``end_all``): their clients reconnect
with ``Last-Event-ID`` to the next process and miss nothing.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict

from homing.errors import Overloaded, RateLimited
from homing.metrics import FEED_STREAMS

__all__ = ["FeedStreams", "StreamKey"]

StreamKey = tuple[str, str]  # (tenant id, recipient row id)


class FeedStreams:
    """The open streams by recipient, bounded per recipient and per process."""

    def __init__(self, per_recipient: int, per_process: int) -> None:
        self._per_recipient = per_recipient
        self._per_process = per_process
        self._waiting: dict[StreamKey, set[asyncio.Event]] = defaultdict(set)
        self._open = 0
        self._ending = False

    @property
    def open_count(self) -> int:
        return self._open

    @property
    def ending(self) -> bool:
        """Whether this process is stopping: its streams end and no new one opens."""
        return self._ending

    def end_all(self) -> None:
        """End every stream of this process and refuse new ones (a graceful stop): a
        stream never ends by itself, and the server waits for open responses."""
        self._ending = True
        for events in self._waiting.values():
            for event in events:
                event.set()

    def open(self, key: StreamKey) -> asyncio.Event:
        """Register one stream of the recipient; RateLimited past the recipient's
        bound, Overloaded past the process's."""
        if self._ending:
            raise Overloaded("this process is stopping")
        if self._open >= self._per_process:
            raise Overloaded("this process has as many feed streams open as it allows")
        if len(self._waiting.get(key, ())) >= self._per_recipient:
            raise RateLimited(
                "this recipient has as many feed streams open as allowed",
                {"limit": self._per_recipient},
                retry_after=5,
            )
        event = asyncio.Event()
        self._waiting[key].add(event)
        self._open += 1
        FEED_STREAMS.inc()
        return event

    def close(self, key: StreamKey, event: asyncio.Event) -> None:
        waiting = self._waiting.get(key)
        if waiting is None or event not in waiting:
            return
        waiting.discard(event)
        if not waiting:
            del self._waiting[key]
        self._open -= 1
        FEED_STREAMS.dec()

    def notify(self, key: StreamKey) -> None:
        """Wake the recipient's streams in this process (never blocks)."""
        for event in self._waiting.get(key, ()):
            event.set()
