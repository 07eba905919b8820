"""Helpers of the provider-endpoint and response-size adversary tests.

``NetworkRecorder`` stands between the test process and the network: it answers name
lookups from a stub table (loopback names resolve for real), records every connection
attempt, and refuses — without sending a packet — any that is not to loopback. So a
test can assert that Homing never even tried to reach an internal address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return host.lower() in {"localhost", "localhost.localdomain"}


class NetworkRecorder:
    """Stub DNS plus a record of every connection attempt (non-loopback ones refused)."""

    def __init__(self, stub: dict[str, str]) -> None:
        self.stub = stub
        self.lookups: list[str] = []
        self.connects: list[str] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> NetworkRecorder:
        real_getaddrinfo = socket.getaddrinfo
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            name = host.decode() if isinstance(host, bytes) else str(host)
            self.lookups.append(name)
            if name in self.stub:
                address = self.stub[name]
                family = socket.AF_INET6 if ":" in address else socket.AF_INET
                sockaddr = (address, int(port or 0))
                return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr)]
            if host is None or _is_loopback(name):
                return real_getaddrinfo(host, port, *args, **kwargs)
            raise socket.gaierror(socket.EAI_NONAME, "test stub: unknown name")

        def refuse(sock: socket.socket, address: Any) -> bool:
            if sock.family == socket.AF_UNIX:
                return False
            self.connects.append(str(address[0]))
            return not _is_loopback(str(address[0]))

        def connect(sock: socket.socket, address: Any) -> None:
            if refuse(sock, address):
                raise OSError(101, "test guard: not loopback")  # ENETUNREACH
            real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            if refuse(sock, address):
                raise OSError(101, "test guard: not loopback")
            return real_connect_ex(sock, address)

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        monkeypatch.setattr(socket.socket, "connect", connect)
        monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
        return self

    @property
    def outside(self) -> list[str]:
        """Connection attempts to anything but loopback."""
        return [address for address in self.connects if not _is_loopback(address)]


class LoopbackServer:
    """A raw TCP server on 127.0.0.1 that counts connections and runs ``handler``."""

    def __init__(self, handler: Handler | None = None) -> None:
        self._handler = handler
        self.connections = 0
        self._server: asyncio.Server | None = None
        self.port = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            if self._handler is not None:
                await self._handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> LoopbackServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


async def read_head(reader: asyncio.StreamReader) -> bytes:
    """The request line and headers (the body, if any, is left unread)."""
    return await reader.readuntil(b"\r\n\r\n")


def answer(status: str, body: bytes = b"", headers: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{headers}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
