"""``GET /feed/stream``: a recipient's feed as Server-Sent Events (docs/feed.md, "The
stream").

Three tasks serve one stream: the follower reads what came after the last sequence
number sent (woken by the write path, or by its poll at most a second later) and puts
events in a bounded buffer (a backlog in buffer-sized steps, each once the reader has
taken half of the last); the sender writes them out, with a heartbeat comment when
there is nothing to say; the watcher notices the client leaving. The buffer is never
waited on: a follower that finds it full drops the stream (the reader is a whole
buffer behind), so a slow reader holds at most HOMING_FEED_STREAM_BUFFER events and
never slows a send. Each item event carries its sequence number as ``id``: a client
that reconnects with ``Last-Event-ID`` gets everything after it. A graceful stop of
the process ends the follower (``FeedStreams.end_all``), and so the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping

import orjson
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from homing.api.schemas.feed import FeedItemPublic
from homing.managers.feed import Feed, FeedReader
from homing.metrics import FEED_STREAMS_DROPPED

__all__ = ["FeedStream", "item_event", "unread_event"]

HEARTBEAT = b": heartbeat\n\n"


def item_event(item: FeedItemPublic) -> bytes:
    data = orjson.dumps(item.model_dump(mode="json"))
    return b"id: %d\nevent: item\ndata: %s\n\n" % (item.seq, data)


def unread_event(count: int, last: int) -> bytes:
    """The unread count, with ``id`` the last seq the stream has sent (or started
    after): a client resumes from it even when no item came, and misses nothing."""
    data = orjson.dumps({"unread_count": count})
    return b"id: %d\nevent: unread\ndata: %s\n\n" % (last, data)


class _Dropped(Exception):
    """The reader fell a whole buffer behind."""


class FeedStream(Response):
    """The response of one open stream; the caller has registered it
    (``FeedStreams.open``) and this closes it."""

    def __init__(
        self,
        feed: Feed,
        reader: FeedReader,
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
        self._after = after
        self._wake = wake
        self._start_headers = headers
        self._poll = poll
        self._heartbeat = heartbeat
        self.buffer: asyncio.Queue[bytes] = asyncio.Queue(maxsize=buffer)
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

    def _put(self, event: bytes) -> None:
        try:
            self.buffer.put_nowait(event)
        except asyncio.QueueFull:
            self._drop()

    def _drop(self) -> None:
        self.dropped = True
        FEED_STREAMS_DROPPED.inc()
        raise _Dropped

    async def _follow(self) -> None:
        last = self._after
        unread: int | None = None
        with contextlib.suppress(_Dropped):
            while not self._feed.streams.ending:
                self._wake.clear()
                # One place kept for the unread count that follows the items.
                free = self.buffer.maxsize - self.buffer.qsize() - 1
                items, count = await self._feed.after(self._reader, last, max(free, 1))
                if items and free < 1:
                    self._drop()
                for item in items:
                    self._put(item_event(FeedItemPublic.of(item)))
                    last = item.seq
                if count != unread:
                    self._put(unread_event(count, last))
                    unread = count
                if items and len(items) == free:
                    # A backlog (a resume after a long absence): read on once the
                    # reader has taken half the buffer; one that cannot within a
                    # poll interval is a slow reader, and dropped.
                    self._room.clear()
                    try:
                        await asyncio.wait_for(self._room.wait(), self._poll)
                    except TimeoutError:
                        self._drop()
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self._poll)

    async def _send(self, send: Send) -> None:
        while True:
            try:
                event = await asyncio.wait_for(self.buffer.get(), self._heartbeat)
            except TimeoutError:
                event = HEARTBEAT
            if self.buffer.qsize() <= self.buffer.maxsize // 2:
                self._room.set()
            await send({"type": "http.response.body", "body": event, "more_body": True})


async def _watch(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
