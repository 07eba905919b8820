"""Running the sandbox: uvicorn for the vendor apps, the SMTP sink beside it, one loop.

``SandboxServer`` is what tests and benchmarks start (ephemeral ports by default);
``serve_forever`` is what ``homing sandbox`` runs until Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
from collections.abc import Callable, Generator
from types import TracebackType

import uvicorn

from homing.sandbox.app import VENDOR_PREFIXES, build_app
from homing.sandbox.events import EventPoster
from homing.sandbox.smtp import SmtpSink
from homing.sandbox.state import SandboxState

log = logging.getLogger("homing.sandbox")

DEFAULT_PORT = 8787
DEFAULT_SMTP_PORT = 2525
STARTUP_TIMEOUT_SECONDS = 10.0
# How often ``homing sandbox`` posts the vendors' retries that have come due.
RETRY_TICK_SECONDS = 1.0


class _EmbeddedServer(uvicorn.Server):
    """A uvicorn server that leaves signals to its host and stops as soon as asked."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._exit_requested = asyncio.Event()

    def request_exit(self) -> None:
        """Ask the server to shut down now."""
        self.should_exit = True
        self._exit_requested.set()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def main_loop(self) -> None:
        # uvicorn's own loop notices should_exit only on its 0.1 s tick; every test
        # stops a sandbox, so wake on the request instead.
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864_000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._exit_requested.wait(), 0.1)


class SandboxServer:
    """The sandbox's HTTP server and SMTP sink, started and stopped together.

    ``port`` 0 (and ``smtp_port`` 0) bind free ports; ``smtp_port=None`` runs no SMTP
    sink. ``stop`` is prompt even while requests hang: it releases every hang first.
    ``retry_in_background``: post the vendors' retries as they come due on the wall
    clock (``homing sandbox``); otherwise only ``POST /_sandbox/events/retry`` does,
    so a test decides when time passes.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        smtp_port: int | None = 0,
        *,
        state: SandboxState | None = None,
        graceful_shutdown_seconds: int = 5,
        retry_in_background: bool = False,
    ) -> None:
        self.host = host
        self.state = state if state is not None else SandboxState()
        self._requested_port = port
        self._requested_smtp_port = smtp_port
        self._grace = graceful_shutdown_seconds
        self._socket: socket.socket | None = None
        self._port: int | None = None
        self._server: _EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._smtp: SmtpSink | None = None
        self._retry_in_background = retry_in_background
        self._retrying: asyncio.Task[None] | None = None

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT`` of the HTTP server."""
        if self._port is None:
            raise RuntimeError("the sandbox is not started")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._port}"

    def provider_base_url(self, provider: str) -> str:
        """The ``base_url`` a tenant's provider config should use, e.g. ``…/sendgrid``."""
        if provider not in VENDOR_PREFIXES:
            raise ValueError(f"the sandbox serves no HTTP provider named {provider!r}")
        return self.base_url + VENDOR_PREFIXES[provider]

    @property
    def smtp_port(self) -> int | None:
        """The SMTP sink's port while it runs, else ``None``."""
        return None if self._smtp is None else self._smtp.port

    async def start(self) -> None:
        """Bind, serve in background tasks, and return once both servers listen."""
        if self._task is not None:
            raise RuntimeError("the sandbox is already started")
        self.state.rearm()
        self._socket = _listening_socket(self.host, self._requested_port)
        self._port = int(self._socket.getsockname()[1])
        config = uvicorn.Config(
            build_app(self.state),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            ws="none",
            server_header=False,
            timeout_graceful_shutdown=self._grace,
        )
        self._server = _EmbeddedServer(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]))
        try:
            await _until_started(self._server, self._task)
            if self._requested_smtp_port is not None:
                self._smtp = SmtpSink(self.state, self.host, self._requested_smtp_port)
                await self._smtp.start()
        except BaseException:
            await self.stop()
            raise
        if self._retry_in_background:
            self._retrying = asyncio.create_task(self._retry_loop())

    async def _retry_loop(self) -> None:
        poster = EventPoster(self.state)
        while True:
            await self.state.hang(RETRY_TICK_SECONDS)
            try:
                await poster.pump()
            except Exception:  # one bad retry must not end the vendors' retries
                log.exception("sandbox event retries failed")

    async def stop(self) -> None:
        """Release hangs, drop SMTP sessions, and shut uvicorn down gracefully."""
        self.state.release()
        if self._retrying is not None:
            self._retrying.cancel()
            await asyncio.gather(self._retrying, return_exceptions=True)
            self._retrying = None
        if self._smtp is not None:
            await self._smtp.stop()
            self._smtp = None
        if self._server is not None and self._task is not None:
            self._server.request_exit()
            try:
                await self._task
            finally:
                self._server = None
                self._task = None
        if self._socket is not None:
            self._socket.close()

    async def __aenter__(self) -> SandboxServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()


def _listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # An explicit IPPROTO_TCP lets asyncio set TCP_NODELAY on accepted connections;
    # with proto 0 it skips that, and Nagle adds ~40 ms to every keep-alive response.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


async def _until_started(server: uvicorn.Server, task: asyncio.Task[None]) -> None:
    # uvicorn exposes no start event, only a flag; it flips within a few loop turns.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STARTUP_TIMEOUT_SECONDS
    while not server.started:
        if task.done():
            task.result()
            raise RuntimeError("the sandbox HTTP server exited during startup")
        if loop.time() > deadline:
            raise TimeoutError("the sandbox HTTP server did not start")
        await asyncio.sleep(0.005)


async def serve_forever(
    host: str = "127.0.0.1", port: int = DEFAULT_PORT, smtp_port: int | None = DEFAULT_SMTP_PORT
) -> None:
    """Run the sandbox until SIGINT or SIGTERM (or cancellation), printing its addresses.

    This is ``homing sandbox``: the HTTP vendors on ``port``, the SMTP sink on
    ``smtp_port`` (``None`` for none), both on ``host``.
    """
    stopping = asyncio.Event()
    remove_handlers = _on_stop_signals(stopping.set)
    try:
        async with SandboxServer(host, port, smtp_port, retry_in_background=True) as server:
            print(_banner(server), flush=True)
            await stopping.wait()
    finally:
        remove_handlers()


def _on_stop_signals(callback: Callable[[], None]) -> Callable[[], None]:
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, callback)
            installed.append(sig)

    def remove() -> None:
        for sig in installed:
            loop.remove_signal_handler(sig)

    return remove


def _banner(server: SandboxServer) -> str:
    lines = [f"Homing sandbox listening on {server.base_url}"]
    lines += [f"  {name:<9} {server.provider_base_url(name)}" for name in VENDOR_PREFIXES]
    if server.smtp_port is not None:
        lines.append(f"  {'smtp':<9} {server.host}:{server.smtp_port} (AUTH PLAIN/LOGIN, no TLS)")
    lines.append(f"  {'control':<9} {server.base_url}/_sandbox/messages, /faults, /stats")
    return "\n".join(lines)
