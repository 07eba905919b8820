"""Homing's side of each case: a fresh database, the sandbox, one tenant, real processes.

``drain`` times one ``homing worker`` emptying a backlog; ``mixed`` runs ``homing run``
(API and worker in one process, as deployed by default) draining a backlog, first
alone and then while the API takes a steady stream of requests.
"""

from __future__ import annotations

import asyncio
import math
import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench import load
from bench.common import (
    SandboxProcess,
    delete_redis_keys,
    drop_postgres,
    free_port,
    fresh_postgres,
    homing_process,
    sandbox_process,
    say,
    seed_bulk,
    services_for,
    unlimited_tenant_with_provider,
    worker_process,
)
from bench.load import (
    MESSAGE,
    Load,
    SandboxCounter,
    Window,
    drain_rate,
    open_loop,
    post,
    session,
    until_healthy,
    window,
)
from homing.crypto import generate_master_key
from homing.services import Services

REDIS_URL = os.environ.get("HOMING_BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
SEED_CHUNK = 2000


@dataclass
class Setup:
    backend: str
    url: str
    secret: str
    workdir: Path
    services: Services
    sandbox: SandboxProcess
    tenant_id: str
    api_key: str

    async def seed(self, jobs: int) -> None:
        if not jobs:
            return
        say(f"  queueing {jobs:,} jobs for Homing")
        await seed_bulk(self.services, self.tenant_id, jobs, chunk=SEED_CHUNK)


@dataclass(frozen=True, slots=True)
class Mixed:
    """Draining alone, then while ingesting; ``load`` is what the ingest achieved."""

    alone: Window
    during: Window
    load: Load
    ran_dry: bool

    @property
    def share(self) -> float:
        return self.during.per_second / self.alone.per_second if self.alone.per_second else 0.0


@asynccontextmanager
async def setup(backend: str) -> AsyncIterator[Setup]:
    """A fresh database (dropped afterwards), a sandbox process, an unlimited tenant."""
    name = f"homing_bench_all_{os.getpid()}"
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if backend == "sqlite":
            url = f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
        else:
            url = await fresh_postgres(name)
        secret = generate_master_key()
        services = await services_for(url, workdir, secret)
        try:
            async with sandbox_process(free_port()) as sandbox:
                tenant_id, key = await unlimited_tenant_with_provider(services, sandbox)
                yield Setup(backend, url, secret, workdir, services, sandbox, tenant_id, key)
        finally:
            await services.aclose()
            if backend == "postgres":
                await drop_postgres(name)


async def slow_down(sandbox_url: str, latency_ms: int) -> None:
    """Every Resend send waits ``latency_ms`` in the sandbox from now on."""
    async with httpx.AsyncClient(base_url=sandbox_url) as client:
        body = {"provider": "resend", "latency_ms": latency_ms}
        (await client.post("/_sandbox/faults", json=body)).raise_for_status()


async def drain(
    backend: str, jobs: int, warmup: float, seconds: float, latency_ms: int = 0, **env: str
) -> Window:
    """Deliveries/s of one ``homing worker`` (default settings, but ``env``) emptying
    ``jobs`` jobs."""
    async with setup(backend) as s:
        await s.seed(jobs)
        if latency_ms:
            await slow_down(s.sandbox.url, latency_ms)
        async with httpx.AsyncClient(base_url=s.sandbox.url) as client:
            with worker_process(s.url, s.secret, s.workdir, **env):
                return await drain_rate(SandboxCounter(client), jobs, warmup, seconds)


def top_up(rate: float, seconds: float, waiting: int) -> int:
    """Jobs to add so that a worker at ``rate`` still has work after ``seconds``."""
    return max(0, math.ceil(rate * seconds * 1.3) + 1000 - waiting)


@contextmanager
def _homing(s: Setup, command: str, port: int, prefix: str) -> Iterator[str]:
    """``homing COMMAND`` serving on ``port`` with ``api_env``; yields its base URL."""
    with homing_process(command, s.url, s.secret, s.workdir, **api_env(s, port, prefix)):
        yield f"http://127.0.0.1:{port}"


def api_env(s: Setup, port: int, prefix: str) -> dict[str, str]:
    """The settings of an API serving on ``port``: on PostgreSQL its rate windows in
    Redis under ``prefix``, as deployed; on SQLite in memory."""
    env = {"HOMING_HOST": "127.0.0.1", "HOMING_PORT": str(port)}
    if s.backend == "postgres":
        env |= {"HOMING_REDIS_URL": REDIS_URL, "HOMING_REDIS_KEY_PREFIX": prefix}
    return env


async def ingest(backend: str, clients: int, seconds: float, batch_size: int) -> tuple[Load, Load]:
    """``homing api`` alone, with full admission (the tenant's limits are raised so
    that they admit everything but are still checked), driven by ``load.ingest``."""
    port, prefix = free_port(), f"homing-bench-{uuid.uuid4().hex[:12]}"
    async with setup(backend) as s:
        try:
            with _homing(s, "api", port, prefix) as base:
                await until_healthy(base)
                return await load.ingest(base, s.api_key, clients, seconds, batch_size)
        finally:
            await delete_redis_keys(REDIS_URL, prefix)


async def mixed(backend: str, rate: float, alone_s: float, during_s: float, warmup: float) -> Mixed:
    """``homing run`` draining a backlog alone for ``alone_s``; stopped, the backlog
    topped up to last, started again and measured while ingesting ``rate`` req/s."""
    port, prefix = free_port(), f"homing-bench-{uuid.uuid4().hex[:12]}"
    async with setup(backend) as s, httpx.AsyncClient(base_url=s.sandbox.url) as sandbox:
        counter = SandboxCounter(sandbox)
        first = math.ceil(4000 * (warmup + alone_s))
        await s.seed(first)
        try:
            with _homing(s, "run", port, prefix) as base:
                await until_healthy(base)
                alone = await drain_rate(counter, first, warmup, alone_s)
            delivered = await counter()
            waiting = first - delivered
            extra = top_up(alone.per_second, warmup + during_s + 2, waiting)
            await s.seed(extra)
            waiting += extra
            with _homing(s, "run", port, prefix) as base:
                await until_healthy(base)
                await counter.reach(delivered + 1)
                await asyncio.sleep(warmup)
                during, offered = await while_ingesting(counter, base, s.api_key, rate, during_s)
                ran_dry = await counter() >= delivered + waiting + offered.accepted
        finally:
            await delete_redis_keys(REDIS_URL, prefix)
    return Mixed(alone, during, offered, ran_dry)


async def while_ingesting(
    counter: SandboxCounter, base_url: str, api_key: str, rate: float, seconds: float
) -> tuple[Window, Load]:
    """Deliveries over ``seconds`` while ``rate`` single sends a second are offered."""
    request = post(f"{base_url}/v1/notifications/email", MESSAGE, api_key, idempotency_keys=True)
    say(f"  offering {rate:.0f} req/s for {seconds:.0f} s while measuring deliveries")
    async with session() as client:
        during, offered = await asyncio.gather(
            window(counter, seconds), open_loop(client, rate, seconds, request)
        )
    return during, offered
