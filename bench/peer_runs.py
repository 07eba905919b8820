"""The BullMQ peer's side of each case, measured with the same sandbox and meters.

Every run has its own queue prefix (deleted afterwards) and, where the seed keeps job
rows, a fresh PostgreSQL database of its own (dropped afterwards).
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx

from bench import load, peers
from bench.common import (
    drop_postgres,
    free_port,
    fresh_postgres,
    rss_mb,
    sandbox_process,
    say,
)
from bench.homing_runs import Mixed, slow_down, top_up, while_ingesting
from bench.load import Load, SandboxCounter, Window, drain_rate, until_healthy
from bench.peers import PeerQueue


@dataclass
class PeerSetup:
    queue: PeerQueue
    db: str
    sandbox: SandboxCounter
    target: str
    sandbox_url: str

    async def fill(self, jobs: int, mode: str = "seed", rows: bool = True) -> None:
        db = self.db if rows and mode == "seed" else None
        say(f"  queueing {jobs:,} {mode} jobs in BullMQ{' with their rows' if db else ''}")
        await asyncio.to_thread(peers.fill, self.queue, jobs, mode, db)


@asynccontextmanager
async def setup() -> AsyncIterator[PeerSetup]:
    """A queue prefix, a job-row database, a sandbox process; all gone afterwards."""
    name = f"homing_bench_peer_{os.getpid()}"
    queue = PeerQueue()
    url = (await fresh_postgres(name)).replace("postgresql+asyncpg://", "postgresql://")
    try:
        async with (
            sandbox_process(free_port()) as sandbox,
            httpx.AsyncClient(base_url=sandbox.url) as client,
        ):
            target = f"{sandbox.provider_url('resend')}/emails"
            yield PeerSetup(queue, url, SandboxCounter(client), target, sandbox.url)
    finally:
        await peers.forget(queue)
        await drop_postgres(name)


async def drain(
    mode: str, concurrency: int, jobs: int, warmup: float, seconds: float, latency_ms: int = 0
) -> Window:
    """Deliveries/s of one BullMQ worker process emptying ``jobs`` jobs."""
    async with setup() as s:
        await s.fill(jobs, mode)
        if latency_ms:
            await slow_down(s.sandbox_url, latency_ms)
        db = s.db if mode == "seed" else None
        with peers.worker(s.queue, mode, concurrency, s.target, db):
            return await drain_rate(s.sandbox, jobs, warmup, seconds)


async def noop(jobs: int) -> float:
    """Jobs/s of a BullMQ worker (concurrency 100) whose jobs do nothing, by its own clock."""
    async with setup() as s:
        await s.fill(jobs, "noop")
        with peers.worker(s.queue, "noop", 100, jobs=jobs) as worker:
            result = await asyncio.to_thread(worker.wait, 600)
    return float(result["per_second"])


async def ingest(clients: int, seconds: float, batch_size: int) -> tuple[Load, Load]:
    """The seed's API alone (no worker), driven as Homing's is (``load.ingest``)."""
    async with setup() as s:
        with peers.server(s.queue, s.db) as server:
            base = f"http://127.0.0.1:{server.ready['port']}"
            await until_healthy(base)
            return await load.ingest(base, peers.API_KEY, clients, seconds, batch_size)


async def mixed(
    concurrency: int, rate: float, alone_s: float, during_s: float, warmup: float
) -> Mixed:
    """The seed's API with its worker in the same process: draining alone, then (after
    a top-up) while ingesting ``rate`` req/s, as ``homing_runs.mixed``."""
    async with setup() as s:
        first = math.ceil(min(3000, 80 * concurrency) * (warmup + alone_s))
        await s.fill(first)
        with peers.server(s.queue, s.db, concurrency, s.target):
            alone = await drain_rate(s.sandbox, first, warmup, alone_s)
        delivered = await s.sandbox()
        waiting = first - delivered
        extra = top_up(alone.per_second, warmup + during_s + 2, waiting)
        if extra:
            await s.fill(extra)
        waiting += extra
        with peers.server(s.queue, s.db, concurrency, s.target) as server:
            base = f"http://127.0.0.1:{server.ready['port']}"
            await s.sandbox.reach(delivered + 1)
            await asyncio.sleep(warmup)
            during, offered = await while_ingesting(s.sandbox, base, peers.API_KEY, rate, during_s)
            ran_dry = await s.sandbox() >= delivered + waiting + offered.accepted
    return Mixed(alone, during, offered, ran_dry)


async def memory(jobs: int, seconds: float) -> tuple[float, float]:
    """(deliveries/s, worker RSS in MB) of the seed worker (concurrency 5) with ``jobs``
    waiting, measured as bench.backlog measures Homing's. The jobs are queued without
    their rows (the worker's row updates then match nothing) to keep the fill short."""
    async with setup() as s:
        await s.fill(jobs, rows=False)
        with peers.worker(s.queue, "seed", 5, s.target, s.db) as worker:
            await s.sandbox.reach(500)
            start, started = await s.sandbox(), time.monotonic()
            await asyncio.sleep(seconds)
            rate = (await s.sandbox() - start) / (time.monotonic() - started)
            return rate, rss_mb(worker.pid)
