"""Long-running modes: API and workers together, either alone, and the demo."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from typing import Any

import uvicorn

from homing.api import digest_plans
from homing.api.app import create_app
from homing.cli.metrics_server import metrics_serving
from homing.cli.supervisor import ChildProcesses, default_worker_processes
from homing.services import Services

log = logging.getLogger("homing")

# How long a parent waits for its API children to serve before it serves anyway.
CHILD_READY_SECONDS = 60.0


class _Server(uvicorn.Server):
    """uvicorn, with SIGINT/SIGTERM meaning "stop gracefully and exit 0".

    uvicorn's own handling re-raises the signal after shutdown, which would end the
    process before the worker has recorded its outcomes.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._request_exit)
        try:
            yield
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    def _request_exit(self) -> None:
        self.should_exit = True

    ready_fd: int | None = None
    # Called as shutdown starts: ends the responses that never end by themselves.
    ending: Callable[[], None] | None = None

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's graceful shutdown, with the feed's streams ended first: it waits
        for open responses (up to ``timeout_graceful_shutdown``, then cancels them), and
        a stream has no end. ``ending`` only wakes the streams; they run once uvicorn's
        shutdown first awaits, after it has stopped listening, so a browser reconnects
        to another process (or the restarted one) and never to this one."""
        if self.ending is not None:
            self.ending()
        await super().shutdown(sockets=sockets)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Serve, then tell the parent so through ``ready_fd`` (homing.cli.supervisor)."""
        await super().startup(sockets=sockets)
        if self.ready_fd is not None and self.started:
            os.write(self.ready_fd, b".")
            os.close(self.ready_fd)
            self.ready_fd = None


def _server(services: Services, host: str, port: int) -> _Server:
    config = uvicorn.Config(
        create_app(services),
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=10,
    )
    server = _Server(config)
    server.ending = services.feed.streams.end_all
    return server


def listening_socket(host: str, port: int, *, shared: bool) -> socket.socket:
    """A TCP socket listening on host:port. ``shared``: with SO_REUSEPORT, so other API
    processes bind the same port and the kernel spreads connections between them."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if shared:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def api_processes(services: Services, *, run: bool) -> int:
    """How many processes serve the API: one on SQLite (one writer) and where the rate
    windows live in this process's memory (more would each admit the whole rate);
    else ``HOMING_API_PROCESSES``, by default one per core (``homing api``) or one per
    two cores (``homing run``, whose workers need the others)."""
    configured = services.settings.server.api_processes
    if services.db.is_sqlite or not services.limiter.shared or not hasattr(socket, "SO_REUSEPORT"):
        if configured is not None and configured > 1:
            log.warning(
                "HOMING_API_PROCESSES ignored: one API process on SQLite, without "
                "HOMING_REDIS_URL (its rate windows are per process) or without SO_REUSEPORT"
            )
        return 1
    if configured is not None:
        return configured
    cores = os.cpu_count() or 1
    return default_worker_processes(cores) if run else cores


@contextlib.asynccontextmanager
async def api_children(
    host: str, port: int, count: int, env: Mapping[str, str]
) -> AsyncIterator[None]:
    """``count`` more ``homing api`` processes joining this one's port."""
    if count < 1:
        yield
        return
    command = ["api", "--host", host, "--port", str(port), "--joined"]
    # This process serves only once they all do, so no early client (a load balancer's
    # health check, a benchmark's warm-up) finds one process serving alone.
    children = ChildProcesses("api", command, count, env, ready_timeout=CHILD_READY_SECONDS)
    await children.start()
    try:
        yield
    finally:
        await children.stop()


async def run_api(
    services: Services, host: str, port: int, *, joined: bool = False, ready_fd: int | None = None
) -> int:
    """Serve the HTTP API until interrupted, from ``api_processes`` processes (this one
    and children). ``joined``: this is such a child; it only serves, and writes to
    ``ready_fd`` once it does."""
    count = 1 if joined else api_processes(services, run=False)
    sock = listening_socket(host, port, shared=joined or count > 1)
    port = sock.getsockname()[1]
    if not joined:
        log.info("api listening", extra={"url": f"http://{host}:{port}", "processes": count})
    server = _server(services, host, port)
    server.ready_fd = ready_fd
    async with api_children(host, port, count - 1, os.environ):
        await server.serve(sockets=[sock])
    return 0


@contextlib.asynccontextmanager
async def _beside(
    periodic: Callable[[], Coroutine[Any, Any, None]], stop: asyncio.Event, enabled: bool
) -> AsyncIterator[None]:
    """``periodic()`` as a task for as long as the block runs (not at all unless
    ``enabled``); the block's end sets ``stop`` and waits for the task."""
    if not enabled:
        yield
        return
    task = asyncio.create_task(periodic())
    try:
        yield
    finally:
        stop.set()
        await asyncio.gather(task, return_exceptions=True)


def retention_running(
    services: Services, stop: asyncio.Event, *, enabled: bool = True
) -> contextlib.AbstractAsyncContextManager[None]:
    """The periodic retention purge, beside the worker loop, for as long as the block
    runs (docs/operations.md "Retention"). Every worker process runs one; the store's lock lets
    one purge at a time."""
    interval = services.settings.retention.interval_seconds
    return _beside(lambda: services.retention().run_periodically(stop, interval), stop, enabled)


def watch_running(
    services: Services, stop: asyncio.Event, *, enabled: bool = True
) -> contextlib.AbstractAsyncContextManager[None]:
    """The alert and notice checks (docs/operations.md "Alerts"), beside the worker loop, for as
    long as the block runs. Every worker process runs them; a lease lets one evaluate
    per interval."""
    return _beside(lambda: services.check_rounds().run_periodically(stop), stop, enabled)


def reconciler_running(
    services: Services, stop: asyncio.Event, *, enabled: bool = True
) -> contextlib.AbstractAsyncContextManager[None]:
    """The periodic reconciler pass, beside the worker loop, for as long as the block
    runs (docs/operations.md "The ledger invariant"). Every worker process runs one; the store's
    lock lets one pass run at a time."""
    interval = services.settings.reconcile.interval_seconds
    return _beside(lambda: services.reconciler().run_periodically(stop, interval), stop, enabled)


def notifications_running(
    services: Services, stop: asyncio.Event, *, enabled: bool = True
) -> contextlib.AbstractAsyncContextManager[None]:
    """The sweep of multi-channel notifications' steps, beside the worker loop, for as
    long as the block runs (docs/notifications.md). Every worker process runs one; each
    move is conditional, so sweeps side by side move a step once."""
    interval = services.settings.worker.notification_sweep_seconds
    return _beside(lambda: services.notifications.run_periodically(stop, interval), stop, enabled)


def digests_running(
    services: Services, stop: asyncio.Event, *, enabled: bool = True
) -> contextlib.AbstractAsyncContextManager[None]:
    """The sweep that sends digests whose window closed, beside the worker loop, on the
    notification sweep's interval (docs/notifications.md, "Digests"). Every worker
    process runs one; a digest is marked sent in the transaction that sends it, so
    sweeps side by side send it once."""
    interval = services.settings.worker.notification_sweep_seconds
    plan = digest_plans.planner(services)
    return _beside(lambda: services.digests.run_periodically(stop, interval, plan), stop, enabled)


async def run_worker(services: Services, *, once: bool = False, supervised: bool = False) -> int:
    """Deliver until SIGINT/SIGTERM, or with ``once`` until nothing is claimable. With
    HOMING_METRICS_PORT, serve /metrics and /readyz meanwhile, unless ``supervised``
    (a child of ``homing run``, whose API answers the scrapes of all its processes)."""
    stop = asyncio.Event()
    install_stop_signals(stop)
    serving = metrics_serving(services) if not (once or supervised) else contextlib.nullcontext()
    async with (
        serving,
        retention_running(services, stop, enabled=not once),
        watch_running(services, stop, enabled=not once),
        reconciler_running(services, stop, enabled=not once),
        notifications_running(services, stop, enabled=not once),
        digests_running(services, stop, enabled=not once),
    ):
        processed = await services.worker().run(once=once, stop=stop)
    log.info("worker stopped", extra={"processed": processed})
    return 0


async def run_all(
    services: Services, host: str, port: int, demo: bool, loopback_webhooks: bool = False
) -> int:
    """The API, and workers: in this process on SQLite, in child processes on
    PostgreSQL (homing.cli.supervisor). ``demo`` adds the sandbox and a demo tenant
    (homing.cli.demo); ``loopback_webhooks``: the demo let webhooks reach loopback."""
    sandbox = None
    env = dict(os.environ)
    if demo:
        from homing.cli import demo as demo_mode

        sandbox, documented = await demo_mode.start_sandbox(host)
        mail_sink = f"smtp://{host}:{sandbox.smtp_port}"
        for url in (sandbox.base_url, mail_sink):
            services.sandbox.allow(url)  # test keys may send to it
        env["HOMING_SANDBOX_URLS"] = ",".join(
            filter(None, [env.get("HOMING_SANDBOX_URLS"), sandbox.base_url, mail_sink])
        )
        prepared = await demo_mode.prepare(services, sandbox)
        demo_mode.announce(
            prepared, f"http://{host}:{port}", sandbox, documented, loopback_webhooks
        )
    processes = worker_processes(services)
    workers = ["worker", "--supervised"]
    children = ChildProcesses("worker", workers, processes, env) if processes else None
    serving = api_processes(services, run=True)
    sock = listening_socket(host, port, shared=serving > 1)
    port = sock.getsockname()[1]
    stop = asyncio.Event()
    worker = None
    if children is not None:
        await children.start()
    else:
        worker = asyncio.create_task(services.worker().run(stop=stop))
    log.info(
        "homing running",
        extra={
            "url": f"http://{host}:{port}",
            "database": services.db.dialect,
            "worker_processes": processes,
            "api_processes": serving,
        },
    )
    try:
        # The worker children purge; in one process, this one does.
        async with (
            retention_running(services, stop, enabled=children is None),
            watch_running(services, stop, enabled=children is None),
            reconciler_running(services, stop, enabled=children is None),
            notifications_running(services, stop, enabled=children is None),
            digests_running(services, stop, enabled=children is None),
            api_children(host, port, serving - 1, env),
        ):
            await _server(services, host, port).serve(sockets=[sock])
    finally:
        stop.set()
        if worker is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await worker
        if children is not None:
            await children.stop()
        if sandbox is not None:
            await sandbox.stop()
    return 0


def worker_processes(services: Services) -> int:
    """How many ``homing worker`` children ``homing run`` starts (0: work in-process)."""
    if services.db.is_sqlite:
        return 0
    configured = services.settings.server.run_worker_processes
    return default_worker_processes() if configured is None else configured


def install_stop_signals(stop: asyncio.Event) -> None:
    """SIGINT and SIGTERM ask for a graceful stop."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
