"""A receiver on 127.0.0.1 that verifies with the ``standardwebhooks`` library and
remembers the ``webhook-id`` of every delivery it accepted (a repeat is a replay)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import standardwebhooks

from tests.webhooks.receiver import Reply, _read_request, _response
from tests.webhooks.receivers import Verdict


class StandardReceiver:
    def __init__(self, secret: str) -> None:
        self._webhook = standardwebhooks.Webhook(secret)
        self._seen: set[str] = set()
        self.verdicts: list[Verdict] = []
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def log(self) -> list[Verdict]:
        return list(self.verdicts)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def _status(self, headers: dict[str, str], body: bytes) -> int:
        try:
            self._webhook.verify(body, headers)
        except standardwebhooks.WebhookVerificationError:
            return 401
        msg_id = headers["webhook-id"]
        if msg_id in self._seen:
            return 409
        self._seen.add(msg_id)
        return 204

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            received = await _read_request(reader)
            status = self._status(received.headers, received.body)
            self.verdicts.append(Verdict("standard", status, received.headers, received.body))
            writer.write(_response(Reply(status=status, body=b"")))
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


@contextlib.asynccontextmanager
async def standard_receiver(secret: str) -> AsyncIterator[StandardReceiver]:
    server = StandardReceiver(secret)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
