"""Long-running modes: API and workers together, either alone, and the demo."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shlex
import signal
import sys
from collections.abc import Iterator

import uvicorn

from homing.accounts import NewProvider
from homing.api.app import create_app
from homing.models import Channel, Plan
from homing.services import Services
from homing.supervisor import WorkerProcesses, default_worker_processes

log = logging.getLogger("homing")


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


def _server(services: Services, host: str, port: int) -> uvicorn.Server:
    config = uvicorn.Config(
        create_app(services),
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=10,
    )
    return _Server(config)


async def run_api(services: Services, host: str, port: int) -> int:
    """Serve the HTTP API until interrupted."""
    log.info("api listening", extra={"url": f"http://{host}:{port}"})
    await _server(services, host, port).serve()
    return 0


async def run_worker(services: Services, *, once: bool = False) -> int:
    """Deliver until SIGINT/SIGTERM, or with ``once`` until nothing is claimable."""
    from homing.cli import install_stop_signals

    stop = asyncio.Event()
    install_stop_signals(stop)
    processed = await services.worker().run(once=once, stop=stop)
    log.info("worker stopped", extra={"processed": processed})
    return 0


async def run_all(services: Services, host: str, port: int, demo: bool) -> int:
    """The API, and workers: in this process on SQLite, in child processes on
    PostgreSQL (homing.supervisor). ``demo`` adds the sandbox and a demo tenant."""
    sandbox = None
    env = dict(os.environ)
    if demo:
        from homing.sandbox.server import SandboxServer

        sandbox = SandboxServer(port=0, smtp_port=None)
        await sandbox.start()
        services.sandbox.allow(sandbox.base_url)  # test keys may send to it
        env["HOMING_SANDBOX_URLS"] = ",".join(
            filter(None, [env.get("HOMING_SANDBOX_URLS"), sandbox.base_url])
        )
        await _demo_tenant(services, sandbox.provider_base_url, f"http://{host}:{port}")
    processes = worker_processes(services)
    children = WorkerProcesses(processes, env) if processes else None
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
        },
    )
    try:
        await _server(services, host, port).serve()
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
    configured = services.settings.run_worker_processes
    return default_worker_processes() if configured is None else configured


async def _demo_tenant(services: Services, base_url: object, api_url: str) -> None:
    tenant, key = await services.tenants.create("demo", Plan.STARTUP)
    for priority, provider in enumerate(("resend", "sendgrid"), start=1):
        await services.accounts.register(
            NewProvider(
                tenant_id=tenant.id,
                channel=Channel.EMAIL,
                provider=provider,
                credentials={"api_key": f"{provider}-demo-key-0000"},
                config={"base_url": base_url(provider)},  # type: ignore[operator]
                priority=priority,
            )
        )
    body = json.dumps(
        {"to": "ada@example.com", "from": "demo@example.com", "subject": "Hi", "text": "It works"}
    )
    curl = (
        f"curl -s -X POST {api_url}/v1/notifications/email "
        f"-H {shlex.quote('Authorization: Bearer ' + key)} "
        f"-H 'Content-Type: application/json' -d {shlex.quote(body)}"
    )
    print(f"demo tenant {tenant.id}\nAPI key (shown once): {key}\ntry:\n  {curl}", file=sys.stdout)
    sys.stdout.flush()
