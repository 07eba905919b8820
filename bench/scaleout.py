"""Deliveries per second with 1, 2 and 4 worker processes on one PostgreSQL, and where
the time goes (docs/scaling.md).

    python -m bench.scaleout [--workers 1,2,4] [--jobs 60000] [--tenants 8]
                             [--seconds 15] [--record]

For each count: a fresh database with JOBS jobs waiting, spread over TENANTS tenants
(inserted in bulk by SQL, so the fair claim walks several), the sandbox in its own
process, and that many ``homing worker`` processes. After a warm-up, over SECONDS it
counts deliveries and samples, every 0.2 s, what PostgreSQL's sessions of the database
wait on (``pg_stat_activity.wait_event_type``: Lock, LWLock, IO, Client…; a session
running has none). It also reads the CPU seconds PostgreSQL's processes, the workers and
the sandbox used (``/proc/PID/stat``; PostgreSQL's only when it runs on this machine),
and the WAL written (``pg_current_wal_lsn()`` before and after).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import text

from bench.backlog import SEED_WAITING
from bench.common import (
    cpu_seconds,
    drop_postgres,
    fresh_postgres,
    homing_process,
    postgres_pids,
    print_and_record,
    received,
    sandbox_process,
    say,
    services_for,
    tenant_with_provider,
)
from homing.crypto import generate_master_key
from homing.services import Services

_DATABASE = "homing_bench_scaleout"


@dataclass(frozen=True, slots=True)
class Run:
    workers: int
    rate: float  # deliveries per second
    waits: Counter[str]  # samples of the database's sessions, by what they waited on
    cpu: dict[str, float]  # CPU seconds per second of the window: postgres, workers, sandbox
    wal_per_delivery: float  # bytes


async def measure(workers: int, jobs: int, tenants: int, seconds: float, port: int) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        url = await fresh_postgres(_DATABASE)
        secret = generate_master_key()
        services = await services_for(url, workdir, secret)
        try:
            async with sandbox_process(port) as sandbox:
                ids = [await tenant_with_provider(services, sandbox) for _ in range(tenants)]
                async with services.db.transaction() as conn:
                    for tenant in ids:
                        for statement in SEED_WAITING:
                            await conn.execute(
                                text(statement), {"tenant": tenant, "n": jobs // tenants}
                            )
                    await conn.execute(text("ANALYZE jobs"))
                    await conn.execute(text("ANALYZE queue_entries"))
                with ExitStack() as stack:
                    pids = [
                        stack.enter_context(homing_process("worker", url, secret, workdir))
                        for _ in range(workers)
                    ]
                    while await received(sandbox.url) < 500 * workers:
                        await asyncio.sleep(0.1)
                    return await _window(
                        services, workers, pids, sandbox.proc.pid, sandbox.url, seconds
                    )
        finally:
            await services.aclose()
            await drop_postgres(_DATABASE)


async def _window(
    services: Services,
    workers: int,
    pids: list[int],
    sandbox_pid: int,
    sandbox_url: str,
    seconds: float,
) -> Run:
    """Deliveries, waits, CPU and WAL over ``seconds`` of a running backlog."""
    postgres = postgres_pids()
    lsn = "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"
    waiting = (
        "SELECT coalesce(wait_event_type, 'running') FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'"
    )
    async with services.db.transaction() as conn:
        wal_start = int(await conn.scalar(text(lsn)) or 0)
    cpu_start = [cpu_seconds(postgres), cpu_seconds(pids), cpu_seconds([sandbox_pid])]
    count_start, started = await received(sandbox_url), time.monotonic()
    waits: Counter[str] = Counter()
    while time.monotonic() - started < seconds:
        async with services.db.transaction() as conn:
            waits.update((await conn.scalars(text(waiting))).all())
        await asyncio.sleep(0.2)
    delivered = await received(sandbox_url) - count_start
    elapsed = time.monotonic() - started
    cpu_end = [cpu_seconds(postgres), cpu_seconds(pids), cpu_seconds([sandbox_pid])]
    async with services.db.transaction() as conn:
        wal_end = int(await conn.scalar(text(lsn)) or 0)
    cpu = {
        name: (end - start) / elapsed
        for name, start, end in zip(
            ("postgres", "workers", "sandbox"), cpu_start, cpu_end, strict=True
        )
    }
    return Run(workers, delivered / elapsed, waits, cpu, (wal_end - wal_start) / max(delivered, 1))


def _line(run: Run, first: float) -> str:
    samples = sum(run.waits.values()) or 1
    waits = ", ".join(f"{k} {v / samples:.0%}" for k, v in run.waits.most_common(4))
    cpu = ", ".join(f"{k} {v:.2f}" for k, v in run.cpu.items())
    return (
        f"{run.workers} worker process(es): {run.rate:6.0f} deliveries/s "
        f"({run.rate / first:.2f}x one); CPU cores busy: {cpu}; "
        f"WAL {run.wal_per_delivery / 1024:.1f} KiB/delivery; active sessions: {waits or 'none'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--jobs", type=int, default=60_000)
    parser.add_argument("--tenants", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--port", type=int, default=18033)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    runs = []
    for count in (int(n) for n in args.workers.split(",")):
        say(f"scaleout: {count} worker process(es), {args.jobs:,} jobs waiting")
        runs.append(asyncio.run(measure(count, args.jobs, args.tenants, args.seconds, args.port)))
    lines = [_line(run, runs[0].rate) for run in runs]
    lines.append(f"({os.cpu_count()} cores on this machine, shared by all of the above)")
    title = "scale-out on one PostgreSQL"
    print_and_record(lines, record=args.record, module="bench.scaleout", title=title)


if __name__ == "__main__":
    main()
