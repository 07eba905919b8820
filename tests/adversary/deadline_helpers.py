"""Shared by the deadline adversary tests: a real ``homing run`` process, tenants made
through the admin API, and two hostile loopback peers — a webhook receiver that
trickles its answer for ever and an SMTP server that never greets."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from homing.crypto import generate_master_key
from tests.processes import HomingProcess, eventually, free_port

ADMIN_TOKEN = "admin-token-for-deadline-tests-0123"


async def _healthy(client: httpx.AsyncClient) -> bool:
    try:
        return (await client.get("/healthz")).status_code == 200
    except httpx.TransportError:
        return False


@contextlib.asynccontextmanager
async def homing_run(tmp_path: Path, env: dict[str, str]) -> AsyncIterator[httpx.AsyncClient]:
    """``homing run`` (API and workers in one process, SQLite) and a client for it."""
    port = free_port()
    base_env = {
        "HOMING_DATA_DIR": str(tmp_path / "data"),
        "HOMING_SECRET_KEY": generate_master_key(),
        "HOMING_ADMIN_TOKEN": ADMIN_TOKEN,
        "HOMING_LOG_LEVEL": "warning",
        "HOMING_POLL_INTERVAL_SECONDS": "0.1",
    }
    proc = HomingProcess(["run", "--port", str(port)], {**base_env, **env}, tmp_path / "run.log")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        proc.start()
        try:
            await eventually(lambda: _healthy(client), timeout=30, what="homing run to serve")
            yield client
        finally:
            proc.stop()


async def create_tenant(client: httpx.AsyncClient, name: str) -> dict[str, str]:
    """A STARTUP tenant; the Authorization header of its first API key."""
    response = await client.post(
        "/admin/v1/tenants",
        json={"name": name, "plan": "STARTUP"},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    )
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['api_key']}"}


@dataclass
class Call:
    """One request the slow receiver took: for which job, when it opened and closed."""

    job_id: str
    opened: float
    closed: float | None = None


@dataclass
class SlowReceiver:
    """An HTTP server on loopback that reads a webhook (or an email sent to it as a
    provider), then answers one byte a second for ever, until the client goes away.
    It counts, per job, the requests open at once."""

    calls: list[Call] = field(default_factory=list)
    open_now: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    most_open: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    port: int = 0
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def __aenter__(self) -> SlowReceiver:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            method, job_id = await _read_request(reader)
            if method == "GET":
                # A provider's credential check (SendGrid's scopes) is answered at once.
                writer.write(SCOPES_ANSWER)
                await writer.drain()
                return
            call = Call(job_id, time.monotonic())
            self.calls.append(call)
            self.open_now[job_id] += 1
            self.most_open[job_id] = max(self.most_open[job_id], self.open_now[job_id])
            try:
                await _trickle_until_gone(reader, writer)
            finally:
                self.open_now[job_id] -= 1
                call.closed = time.monotonic()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            self._tasks.discard(task)

    def closed_jobs(self) -> set[str]:
        return {c.job_id for c in self.calls if c.closed is not None}


SCOPES_ANSWER = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 25\r\n"
    b"Connection: close\r\n\r\n"
    b'{"scopes": ["mail.send"]}'
)


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str]:
    """The request's method and the job it is for (a webhook's ``webhook-id``; any
    other request counts as the one email job of its test)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    await reader.readexactly(int(headers.get("content-length", "0")))
    return lines[0].partition(" ")[0], headers.get("webhook-id", "email").removeprefix("msg_")


async def _trickle_until_gone(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A status line and a header that never ends, a byte a second; returns at EOF."""

    async def trickle() -> None:
        text = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100_000
        for byte in text:
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(1.0)

    writing = asyncio.ensure_future(trickle())
    gone = asyncio.ensure_future(reader.read(1))
    try:
        await asyncio.wait({writing, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (writing, gone):
            task.cancel()
        await asyncio.gather(writing, gone, return_exceptions=True)


@dataclass
class SilentSmtp:
    """A TCP server on loopback that accepts connections and never sends a greeting
    (or, with ``greeting``, sends that and then never answers again)."""

    greeting: bytes = b""
    port: int = 0
    connections: int = 0
    open_now: int = 0
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def __aenter__(self) -> SilentSmtp:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        self.open_now += 1
        try:
            writer.write(self.greeting)
            while await reader.read(1024):
                pass  # whatever the client says, no answer ever comes
        except OSError:
            pass
        finally:
            self.open_now -= 1
            writer.close()
            self._tasks.discard(task)
