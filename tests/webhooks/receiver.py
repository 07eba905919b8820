"""A real HTTP receiver on 127.0.0.1 for webhook tests: records requests, answers
as scripted. Deliberately minimal HTTP/1.1 (one request per connection)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    raw_headers: list[tuple[str, str]]
    body: bytes


@dataclass(frozen=True)
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b"ok"
    hang: bool = False  # read the request, never answer (until the receiver stops)


_REASONS = {200: "OK", 204: "No Content", 302: "Found", 410: "Gone", 429: "Too Many Requests"}


class Receiver:
    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.replies: list[Reply] = []
        self.default = Reply()
        self._server: asyncio.Server | None = None
        self._release = asyncio.Event()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reply(self, *replies: Reply) -> None:
        """Answer the next requests with these, then with ``default``."""
        self.replies.extend(replies)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        self._release.set()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            received = await _read_request(reader)
            self.requests.append(received)
            reply = self.replies.pop(0) if self.replies else self.default
            if reply.hang:
                await self._release.wait()
                return
            writer.write(_response(reply))
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


async def _read_request(reader: asyncio.StreamReader) -> Received:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    request_line, *lines = head.split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    raw = [tuple(part.strip() for part in line.split(":", 1)) for line in lines if line]
    pairs = [(k, v) for k, v in raw]
    headers = {k.lower(): v for k, v in pairs}
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Received(method, path, headers, pairs, body)


def _response(reply: Reply) -> bytes:
    reason = _REASONS.get(reply.status, "Status")
    lines = [f"HTTP/1.1 {reply.status} {reason}", f"Content-Length: {len(reply.body)}"]
    lines += [f"{k}: {v}" for k, v in reply.headers.items()]
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + reply.body
