"""``GET /feed/stream``: a recipient's feed as Server-Sent Events (docs/feed.md, "The
stream").

Three tasks serve one stream: the follower reads what came after the last sequence
number sent (when woken: by the write path of this process, by a mark, or by the
process's one poll, ``FeedWatch``) and puts events in a bounded buffer (a backlog in
buffer-sized steps, each once the reader has taken half of the last); the sender
writes them out, with a heartbeat comment when there is nothing to say; the watcher
notices the client leaving. The buffer is never waited on: a follower that finds it
full drops the stream (the reader is a whole buffer behind), so a slow reader holds at
most HOMING_FEED_STREAM_BUFFER events and never slows a send. Each item event carries
its sequence number as ``id``: a client that reconnects with ``Last-Event-ID`` gets
everything after it. Every read checks the stream's token again: once it has expired,
or the tenant's feed secret was rotated, the stream sends ``expired`` or ``revoked``
(and nothing it read with it) and ends. A graceful stop of the process ends the
follower (``FeedStreams.end_all``), and so the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping

import orjson
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from homing.api.schemas.feed import FeedItemPublic
from homing.domain.feed import FeedItem
from homing.managers.feed import Ended, Feed, FeedGrant, FeedReader
from homing.metrics import FEED_STREAMS_DROPPED

__all__ = ["FeedStream", "ended_event", "item_event", "unread_event"]

HEARTBEAT = b": heartbeat\n\n"
_ENDED: dict[Ended, bytes] = {
    "expired": b"the feed token expired",
    "revoked": b"the feed secret was rotated",
}


def item_event(item: FeedItemPublic) -> bytes:
    data = orjson.dumps(item.model_dump(mode="json"))
    return b"id: %d\nevent: item\ndata: %s\n\n" % (item.seq, data)


def unread_event(count: int, last: int) -> bytes:
    """The unread count, with ``id`` the last seq the stream has sent (or started
    after): a client resumes from it even when no item came, and misses nothing."""
    data = orjson.dumps({"unread_count": count})
    return b"id: %d\nevent: unread\ndata: %s\n\n" % (last, data)


def ended_event(ended: Ended) -> bytes:
    """The last event of a stream whose token no longer holds (no ``id``: a client
    that resumes with a new token resumes where it was)."""
    data = orjson.dumps({"reason": _ENDED[ended].decode()})
    return b"event: %s\ndata: %s\n\n" % (ended.encode(), data)


class _Dropped(Exception):
    """The reader fell a whole buffer behind."""


class FeedStream(Response):
    """The response of one open stream; the caller has registered it
    (``Feed.open_stream``) and this closes it."""

    def __init__(
        self,
        feed: Feed,
        reader: FeedReader,
        grant: FeedGrant,
        after: int,
        wake: asyncio.Event,
        headers: Mapping[str, str],
        *,
        poll: float,
        heartbeat: float,
        buffer: int,
    ) -> None:
        self._feed = feed
        self._reader = reader
        self._grant = grant
        self._last = after
        self._unread: int | None = None
        self._wake = wake
        self._start_headers = headers
        self._poll = poll
        self._heartbeat = heartbeat
        # Events, then None once the stream has said why it ends.
        self.buffer: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=buffer)
        self.status_code = 200
        self.background = None
        self._room = asyncio.Event()
        self.dropped = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(k.lower().encode(), v.encode()) for k, v in self._start_headers.items()]
        try:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            tasks = [
                asyncio.ensure_future(self._follow()),
                asyncio.ensure_future(self._send(send)),
                asyncio.ensure_future(_watch(receive)),
            ]
            try:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in tasks:
                    task.cancel()
                for task in tasks:
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self._feed.streams.close(self._reader.key, self._wake)

    def _put(self, event: bytes | None) -> None:
        try:
            self.buffer.put_nowait(event)
        except asyncio.QueueFull:
            self._drop()

    def _drop(self) -> None:
        self.dropped = True
        FEED_STREAMS_DROPPED.inc()
        raise _Dropped

    async def _follow(self) -> None:
        with contextlib.suppress(_Dropped):
            while not self._feed.streams.ending:
                self._wake.clear()
                # One place kept for the unread count that follows the items.
                free = self.buffer.maxsize - self.buffer.qsize() - 1
                read = await self._feed.follow(self._reader, self._grant, self._last, max(free, 1))
                if not isinstance(read.standing, FeedGrant):
                    await self._end(read.standing)
                    return
                self._grant = read.standing
                if read.items and free < 1:
                    self._drop()
                self._deliver(read.items, read.unread)
                if read.items and len(read.items) == free:
                    await self._backlog()
                    continue
                with contextlib.suppress(TimeoutError):
                    # Woken by a send, a mark or the poll; or at the token's expiry.
                    left = self._feed.seconds_left(self._grant)
                    await asyncio.wait_for(self._wake.wait(), max(left, 0.0))

    async def _end(self, ended: Ended) -> None:
        """Say why the stream ends; the sender ends it once it has written that."""
        self._put(ended_event(ended))
        self._put(None)
        await asyncio.get_running_loop().create_future()  # never done: the sender ends

    def _deliver(self, items: list[FeedItem], unread: int) -> None:
        for item in items:
            self._put(item_event(FeedItemPublic.of(item)))
            self._last = item.seq
        if unread != self._unread:
            self._put(unread_event(unread, self._last))
            self._unread = unread

    async def _backlog(self) -> None:
        """A backlog (a resume after a long absence): read on once the reader has
        taken half the buffer; one that cannot within a poll interval is a slow
        reader, and dropped."""
        self._room.clear()
        try:
            await asyncio.wait_for(self._room.wait(), self._poll)
        except TimeoutError:
            self._drop()

    async def _send(self, send: Send) -> None:
        while True:
            try:
                event = await asyncio.wait_for(self.buffer.get(), self._heartbeat)
            except TimeoutError:
                event = HEARTBEAT
            if event is None:
                return
            if self.buffer.qsize() <= self.buffer.maxsize // 2:
                self._room.set()
            await send({"type": "http.response.body", "body": event, "more_body": True})


async def _watch(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
