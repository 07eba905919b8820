"""Open feed streams of this process (docs/feed.md, "The stream"): their bounds, and
the wake-up the write path, a mark, a rotation and the process's poll
(``homing.managers.feed_watch``) give the streams of a recipient or a tenant.

A stream waits on its own event; ``notify`` sets the events of the recipient's
streams and returns at once, so a send never waits for a reader. Streams are bounded
per recipient, per tenant (so one tenant cannot take the process's places) and per
process. A graceful stop ends them all (``end_all``): their clients reconnect with
``Last-Event-ID`` to the next process and miss nothing.
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from dataclasses import dataclass

from homing.errors import Overloaded, RateLimited
from homing.metrics import FEED_STREAMS

__all__ = ["FeedStreams", "StreamBounds", "StreamKey"]

StreamKey = tuple[str, str]  # (tenant id, recipient row id)


@dataclass(frozen=True, slots=True)
class StreamBounds:
    """Open streams allowed in one process (HOMING_FEED_STREAMS_PER_*)."""

    per_recipient: int
    per_tenant: int
    per_process: int


class FeedStreams:
    """The open streams by recipient, bounded per recipient, tenant and process."""

    def __init__(self, bounds: StreamBounds) -> None:
        self._bounds = bounds
        self._waiting: dict[StreamKey, set[asyncio.Event]] = defaultdict(set)
        self._tenants: Counter[str] = Counter()
        self._open = 0
        self._ending = False

    @property
    def open_count(self) -> int:
        return self._open

    @property
    def ending(self) -> bool:
        """Whether this process is stopping: its streams end and no new one opens."""
        return self._ending

    def keys(self) -> list[StreamKey]:
        """The recipients with a stream open in this process."""
        return list(self._waiting)

    def end_all(self) -> None:
        """End every stream of this process and refuse new ones (a graceful stop): a
        stream never ends by itself, and the server waits for open responses."""
        self._ending = True
        for events in self._waiting.values():
            for event in events:
                event.set()

    def open(self, key: StreamKey) -> asyncio.Event:
        """Register one stream of the recipient; RateLimited past the recipient's or
        the tenant's bound, Overloaded past the process's."""
        b = self._bounds
        if self._ending:
            raise Overloaded("this process is stopping")
        if self._tenants[key[0]] >= b.per_tenant:
            raise _limited("this tenant has as many feed streams open as allowed", "tenant", b)
        if len(self._waiting.get(key, ())) >= b.per_recipient:
            raise _limited(
                "this recipient has as many feed streams open as allowed", "recipient", b
            )
        if self._open >= b.per_process:
            raise Overloaded("this process has as many feed streams open as it allows")
        event = asyncio.Event()
        self._waiting[key].add(event)
        self._tenants[key[0]] += 1
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
        self._tenants[key[0]] -= 1
        if not self._tenants[key[0]]:
            del self._tenants[key[0]]
        self._open -= 1
        FEED_STREAMS.dec()

    def notify(self, key: StreamKey) -> None:
        """Wake the recipient's streams in this process (never blocks)."""
        for event in self._waiting.get(key, ()):
            event.set()

    def notify_tenant(self, tenant_id: str) -> None:
        """Wake every stream of the tenant in this process (its feed secret changed)."""
        for key, events in self._waiting.items():
            if key[0] == tenant_id:
                for event in events:
                    event.set()


def _limited(message: str, scope: str, bounds: StreamBounds) -> RateLimited:
    limit = bounds.per_tenant if scope == "tenant" else bounds.per_recipient
    return RateLimited(message, {"scope": scope, "limit": limit}, retry_after=5)
