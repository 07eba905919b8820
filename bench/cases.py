"""The cases of ``python -m bench all``: for each, Homing's figure and the peer's, run
back to back on the same machine. A run that fails is reported and the others go on.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from dataclasses import dataclass, field

from bench import homing_runs, peer_runs
from bench.backlog import measure as backlog_measure
from bench.common import free_port, say
from bench.homing_runs import Mixed
from bench.load import Load, Window
from bench.report import Figure, amount

CASES = ("ingest", "deliver", "mixed", "slow", "memory", "sqlite", "bulk")
SLOW_MS = 200
# The bulk case's worker: emails of one account meeting within this window share a
# Resend batch call (up to 100), claimed up to this many at a time.
BULK_ENV = {"HOMING_BATCH_WINDOW_SECONDS": "0.02", "HOMING_CLAIM_BATCH_SIZE": "200"}


@dataclass(frozen=True, slots=True)
class Scale:
    """Counts and durations of one run (``FULL`` or ``QUICK``)."""

    ingest_seconds: float
    deliver_jobs: int
    noop_jobs: int
    warmup: float
    window: float
    mixed_alone: float
    mixed_seconds: float
    slow_jobs: int
    memory_jobs: int
    memory_seconds: float
    bulk_jobs: int = 0
    clients: int = 64
    batch_size: int = 1000
    mixed_rate: float = 500


FULL = Scale(
    ingest_seconds=10,
    deliver_jobs=80_000,
    noop_jobs=200_000,
    warmup=2,
    window=20,
    mixed_alone=20,
    mixed_seconds=60,
    slow_jobs=40_000,
    memory_jobs=1_000_000,
    memory_seconds=15,
    bulk_jobs=300_000,
)
QUICK = Scale(
    ingest_seconds=3,
    deliver_jobs=10_000,
    noop_jobs=20_000,
    warmup=1,
    window=3,
    mixed_alone=3,
    mixed_seconds=5,
    slow_jobs=4_000,
    memory_jobs=20_000,
    memory_seconds=3,
    bulk_jobs=40_000,
)


@dataclass
class Runner:
    scale: Scale
    peer: bool = True
    figures: list[Figure] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    async def measure(self, what: str, run: Awaitable[list[Figure]]) -> None:
        """Run one measurement, keep its figures, and carry on if it fails."""
        say(f"{what} …")
        started = time.monotonic()
        try:
            figures = await run
        except Exception as exc:  # one broken run must not lose the others
            self.failures.append(f"{what}: {type(exc).__name__}: {exc}")
            say(f"{what}: FAILED ({type(exc).__name__}: {exc})")
            return
        self.figures += figures
        shown = ", ".join(f"{f.key} {amount(f.value, f.unit)}" for f in figures)
        say(f"{what}: {shown} ({time.monotonic() - started:.0f} s)")

    async def run(self, case: str) -> None:
        await getattr(self, f"case_{case}")()

    async def case_ingest(self) -> None:
        await self.measure("ingest: Homing, PostgreSQL", homing_ingest(self.scale, "postgres"))
        if self.peer:
            await self.measure("ingest: BullMQ peer", peer_ingest(self.scale))

    async def case_deliver(self) -> None:
        s = self.scale
        await self.measure("deliver: Homing, PostgreSQL", homing_drain(s, "postgres", "deliver"))
        if not self.peer:
            return
        for mode, concurrency in (("seed", 5), ("seed", 100), ("bare", 100)):
            name = f"{'bullmq' if mode == 'seed' else mode}-c{concurrency}"
            await self.measure(f"deliver: {name}", peer_drain(s, mode, concurrency, "deliver"))
        await self.measure("deliver: no-op worker, c=100", peer_noop(s))

    async def case_mixed(self) -> None:
        await self.measure("mixed: Homing, PostgreSQL", homing_mixed(self.scale, "postgres"))
        if self.peer:
            for concurrency in (5, 100):
                what = f"mixed: bullmq-c{concurrency}"
                await self.measure(what, peer_mixed(self.scale, concurrency))

    async def case_slow(self) -> None:
        s = self.scale
        await self.measure("slow: Homing, PostgreSQL", homing_drain(s, "postgres", "slow"))
        if self.peer:
            for concurrency in (5, 100):
                what = f"slow: bullmq-c{concurrency}"
                await self.measure(what, peer_drain(s, "seed", concurrency, "slow"))

    async def case_memory(self) -> None:
        await self.measure("memory: Homing, PostgreSQL", homing_memory(self.scale))
        if self.peer:
            await self.measure("memory: bullmq-c5", peer_memory(self.scale))

    async def case_bulk(self) -> None:
        """Jobs/s through Resend's batch endpoint, against the bare BullMQ worker doing
        one HTTP call per job (the deliver case's pair)."""
        s = self.scale
        await self.measure("bulk: Homing, PostgreSQL", homing_bulk(s, "postgres"))
        if self.peer:
            await self.measure("bulk: bare-c100", peer_drain(s, "bare", 100, "bulk"))

    async def case_sqlite(self) -> None:
        s = self.scale
        await self.measure("sqlite: ingest", homing_ingest(s, "sqlite"))
        await self.measure("sqlite: deliver", homing_drain(s, "sqlite", "deliver"))
        await self.measure("sqlite: mixed", homing_mixed(s, "sqlite"))
        await self.measure("sqlite: slow", homing_drain(s, "sqlite", "slow"))


def _homing(backend: str) -> tuple[str, str]:
    return f"homing-{backend}", f"Homing, {'PostgreSQL' if backend == 'postgres' else 'SQLite'}"


def _window_note(w: Window) -> str:
    drained = "; the backlog emptied before the window ended" if w.drained else ""
    return f"{w.delivered:,} delivered in {w.seconds:.1f} s{drained}"


def _mixed_figures(m: Mixed, subject: str, label: str, rate: float) -> list[Figure]:
    note = (
        f"alone {m.alone.per_second:,.0f}/s, while ingesting {m.during.per_second:,.0f}/s; "
        f"ingest accepted {m.load.per_second:,.0f} of {rate:.0f} req/s offered"
        f"{f', {m.load.refused} refused' if m.load.refused else ''}"
        f"{'; the backlog ran dry (a lower bound)' if m.ran_dry else ''}"
    )
    return [
        Figure(f"mixed/{subject}", m.share, "share", label, note),
        Figure(f"mixed-rate/{subject}", m.during.per_second, "deliveries/s", label),
    ]


async def homing_ingest(scale: Scale, backend: str) -> list[Figure]:
    one, many = await homing_runs.ingest(
        backend, scale.clients, scale.ingest_seconds, scale.batch_size
    )
    subject, label = _homing(backend)
    label = f"{label}, homing api"
    return [
        Figure(f"ingest/{subject}", one.per_second, "req/s", label, _refusals(one, many)),
        Figure(f"batch/{subject}", many.per_second * scale.batch_size, "msg/s", label),
    ]


def _refusals(*loads: Load) -> str:
    statuses: dict[int, int] = {}
    for load in loads:
        for status, count in load.statuses.items():
            statuses[status] = statuses.get(status, 0) + count
    shown = ", ".join(f"{count} got {status or 'no answer'}" for status, count in statuses.items())
    return f"refused: {shown}" if shown else ""


async def peer_ingest(scale: Scale) -> list[Figure]:
    one, many = await peer_runs.ingest(scale.clients, scale.ingest_seconds, scale.batch_size)
    label = "BullMQ seed API (no worker)"
    return [
        Figure("ingest/peer", one.per_second, "req/s", label, _refusals(one, many)),
        Figure("batch/peer", many.per_second * scale.batch_size, "msg/s", label),
    ]


async def homing_drain(scale: Scale, backend: str, case: str) -> list[Figure]:
    slow = case == "slow"
    jobs = scale.slow_jobs if slow else scale.deliver_jobs
    w = await homing_runs.drain(backend, jobs, scale.warmup, scale.window, SLOW_MS if slow else 0)
    subject, label = _homing(backend)
    return [Figure(f"{case}/{subject}", w.per_second, "deliveries/s", label, _window_note(w))]


async def homing_bulk(scale: Scale, backend: str) -> list[Figure]:
    w = await homing_runs.drain(backend, scale.bulk_jobs, scale.warmup, scale.window, 0, **BULK_ENV)
    subject, label = _homing(backend)
    label = f"{label}, Resend /emails/batch"
    return [Figure(f"bulk/{subject}", w.per_second, "deliveries/s", label, _window_note(w))]


async def peer_drain(scale: Scale, mode: str, concurrency: int, case: str) -> list[Figure]:
    slow = case == "slow"
    jobs = scale.slow_jobs if slow else scale.deliver_jobs
    w = await peer_runs.drain(
        mode, concurrency, jobs, scale.warmup, scale.window, SLOW_MS if slow else 0
    )
    name = "bullmq" if mode == "seed" else mode
    label = f"{'BullMQ seed' if mode == 'seed' else 'bare BullMQ'} worker, c={concurrency}"
    key = f"{case}/{name}-c{concurrency}"
    return [Figure(key, w.per_second, "deliveries/s", label, _window_note(w))]


async def peer_noop(scale: Scale) -> list[Figure]:
    rate = await peer_runs.noop(scale.noop_jobs)
    note = f"{scale.noop_jobs:,} jobs, timed by the worker itself"
    return [Figure("deliver/noop-c100", rate, "jobs/s", "no-op BullMQ worker, c=100", note)]


async def homing_mixed(scale: Scale, backend: str) -> list[Figure]:
    m = await homing_runs.mixed(
        backend, scale.mixed_rate, scale.mixed_alone, scale.mixed_seconds, scale.warmup
    )
    subject, label = _homing(backend)
    return _mixed_figures(m, subject, f"{label}, homing run", scale.mixed_rate)


async def peer_mixed(scale: Scale, concurrency: int) -> list[Figure]:
    m = await peer_runs.mixed(
        concurrency, scale.mixed_rate, scale.mixed_alone, scale.mixed_seconds, scale.warmup
    )
    label = f"BullMQ seed API + worker, c={concurrency}"
    return _mixed_figures(m, f"bullmq-c{concurrency}", label, scale.mixed_rate)


async def homing_memory(scale: Scale) -> list[Figure]:
    rate, rss = await backlog_measure(scale.memory_jobs, scale.memory_seconds, free_port())
    label, note = "Homing worker, PostgreSQL", f"{scale.memory_jobs:,} jobs waiting (bench.backlog)"
    return [
        Figure("memory/homing-postgres", rss, "MB", label, note),
        Figure("memory-rate/homing-postgres", rate, "deliveries/s", label),
    ]


async def peer_memory(scale: Scale) -> list[Figure]:
    rate, rss = await peer_runs.memory(scale.memory_jobs, scale.memory_seconds)
    label, note = "BullMQ seed worker, c=5", f"{scale.memory_jobs:,} jobs waiting in Redis"
    return [
        Figure("memory/bullmq-c5", rss, "MB", label, note),
        Figure("memory-rate/bullmq-c5", rate, "deliveries/s", label),
    ]
