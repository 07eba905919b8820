"""Accept → sandbox receipt at a steady offered rate (PostgreSQL).

    python -m bench.latency [--rate 100] [--seconds 10] [--record]

Accepts RATE jobs a second for SECONDS (each accept is the committed transaction,
then a wake-up), with one worker process delivering to the sandbox in its own
process, and reports the p50/p99 of accept start → the sandbox's receipt time.
Targets: p50 ≤ 25 ms, p99 ≤ 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from bench.common import (
    append_section,
    drop_postgres,
    fresh_postgres,
    percentile,
    sandbox_process,
    services_for,
    tenant_with_provider,
    worker_process,
)
from bench.probes import accept, one_by_one, received_at
from homing.crypto import generate_master_key
from homing.services import Services


async def offer(
    services: Services, tenant: str, rate: float, seconds: float
) -> list[tuple[str, float]]:
    """Accept jobs on a fixed schedule; returns (job id, accept start) for each."""
    sent: list[tuple[str, float]] = []
    start = time.monotonic()
    for i in range(int(rate * seconds)):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        sent.append(await accept(services, tenant))
    return sent


async def run(rate: float, seconds: float, port: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        url = await fresh_postgres("homing_bench_latency")
        secret = generate_master_key()
        services = await services_for(url, workdir, secret)
        try:
            async with sandbox_process(port) as sandbox:
                tenant = await tenant_with_provider(services, sandbox)
                with worker_process(url, secret, workdir):
                    # Not counted: the first job also waits for the worker to start (a
                    # fixed pause was too short on a slower machine).
                    await one_by_one(services, tenant, sandbox.url, 1)
                    sent = await offer(services, tenant, rate, seconds)
                    waits = [await received_at(sandbox.url, j) - t for j, t in sent]
        finally:
            await services.aclose()
            await drop_postgres("homing_bench_latency")
    p50, p99 = 1000 * percentile(waits, 50), 1000 * percentile(waits, 99)
    verdict = "meets" if p50 <= 25 and p99 <= 100 else "MISSES"
    return (
        f"latency postgres: {rate:.0f} jobs/s offered for {seconds:.0f} s: "
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {1000 * max(waits):.1f} ms "
        f"(targets 25/100 ms: {verdict})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--port", type=int, default=18033)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    line = asyncio.run(run(args.rate, args.seconds, args.port))
    print(line, flush=True)
    if args.record:
        append_section("latency", "python -m bench.latency --record", [line])


if __name__ == "__main__":
    main()
