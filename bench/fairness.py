"""Fairness: a quiet tenant's wait while another floods the queue (PostgreSQL).

    python -m bench.fairness [--flood 100000] [--probes 20] [--record]

Tenant B sends PROBES jobs one by one, first with tenant A idle, then after A has
queued FLOOD jobs, while one worker process drains A. Prints B's median and p99
wait (accept → sandbox receipt) in both phases. Target: loaded p99 ≤ twice the idle p99
+ 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from bench.common import (
    drop_postgres,
    fresh_postgres,
    percentile,
    print_and_record,
    received,
    sandbox_process,
    seed_bulk,
    services_for,
    tenant_with_provider,
    worker_process,
)
from bench.probes import one_by_one
from homing.crypto import generate_master_key


async def run(flood: int, probes: int, port: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        url = await fresh_postgres("homing_bench_fairness")
        secret = generate_master_key()
        services = await services_for(url, workdir, secret)
        try:
            async with sandbox_process(port) as sandbox:
                flooder = await tenant_with_provider(services, sandbox)
                quiet = await tenant_with_provider(services, sandbox)
                with worker_process(url, secret, workdir):
                    # Not counted: the first probe also waits for the worker to start.
                    await one_by_one(services, quiet, sandbox.url, 1)
                    idle = await one_by_one(services, quiet, sandbox.url, probes)
                    await seed_bulk(services, flooder, flood)
                    before = await received(sandbox.url)
                    loaded = await one_by_one(services, quiet, sandbox.url, probes)
                    drained = await received(sandbox.url) - before
        finally:
            await services.aclose()
            await drop_postgres("homing_bench_fairness")
    return _line(idle, loaded, flood, drained)


def _line(idle: list[float], loaded: list[float], flood: int, drained: int) -> str:
    ms = [1000 * percentile(v, p) for v in (idle, loaded) for p in (50, 99)]
    target = 2 * ms[1] + 50
    verdict = "meets" if ms[3] <= target else "MISSES"
    return (
        f"fairness postgres: B idle p50 {ms[0]:.1f} ms p99 {ms[1]:.1f} ms; "
        f"with A's {flood} queued: p50 {ms[2]:.1f} ms p99 {ms[3]:.1f} ms "
        f"(target ≤ {target:.1f} ms: {verdict}; {drained} of A's delivered meanwhile)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flood", type=int, default=100_000)
    parser.add_argument("--probes", type=int, default=20)
    parser.add_argument("--port", type=int, default=18031)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    line = asyncio.run(run(args.flood, args.probes, args.port))
    print_and_record([line], record=args.record, module="bench.fairness", title="fairness")


if __name__ == "__main__":
    main()
