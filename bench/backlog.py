"""Delivery rate against the size of the backlog (PostgreSQL).

    python -m bench.backlog [--sizes 10000,1000000] [--seconds 15] [--record]

For each size: a fresh database with SIZE jobs waiting (inserted in bulk by SQL),
one worker process, and the sandbox in its own process. After a warm-up, counts
deliveries over SECONDS and samples the worker's RSS. Target: the rate with
1,000,000 waiting is at least 80% of the rate with 10,000.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from sqlalchemy import text

from bench.common import (
    append_section,
    drop_postgres,
    fresh_postgres,
    received,
    sandbox_process,
    services_for,
    tenant_with_provider,
    worker_process,
)
from homing.crypto import generate_master_key

_SEED = [
    """
    INSERT INTO jobs (id, tenant_id, channel, queue, status, priority, payload, delivery,
                      attempts_made, skipped_providers, created_at, updated_at)
    SELECT gen_random_uuid()::text, :tenant, 'email', 'notifications-email', 'PENDING', 1,
           '{"to": "a@example.com", "from": "b@example.com", "subject": "s", "text": "t"}',
           'at_least_once', 0, '[]', now(), now()
    FROM generate_series(1, :n)
    """,
    """
    INSERT INTO queue_entries (job_id, tenant_id, queue, priority, available_at, attempts,
                               deferred_seconds, created_at)
    SELECT id, tenant_id, queue, priority, extract(epoch from now()), 0, 0,
           extract(epoch from now())
    FROM jobs WHERE tenant_id = :tenant
    """,
    "ANALYZE jobs",
    "ANALYZE queue_entries",
]


async def measure(size: int, seconds: float, port: int) -> tuple[float, float]:
    """(deliveries per second, worker RSS in MB) with ``size`` jobs waiting."""
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        url = await fresh_postgres("homing_bench_backlog")
        secret = generate_master_key()
        services = await services_for(url, workdir, secret)
        try:
            async with sandbox_process(port) as sandbox:
                tenant = await tenant_with_provider(services, sandbox)
                async with services.db.transaction() as conn:
                    for statement in _SEED:
                        await conn.execute(text(statement), {"tenant": tenant, "n": size})
                with worker_process(url, secret, workdir) as pid:
                    while await received(sandbox.url) < 500:
                        await asyncio.sleep(0.1)
                    start_count, started = await received(sandbox.url), time.monotonic()
                    await asyncio.sleep(seconds)
                    delivered = await received(sandbox.url) - start_count
                    rate = delivered / (time.monotonic() - started)
                    rss = _rss_mb(pid)
        finally:
            await services.aclose()
            await drop_postgres("homing_bench_backlog")  # a million rows: not left behind
    return rate, rss


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--port", type=int, default=18032)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {size: asyncio.run(measure(size, args.seconds, args.port)) for size in sizes}
    first = results[sizes[0]][0]
    lines = [
        f"backlog postgres: {size:>9,} waiting → {rate:7.0f} deliveries/s "
        f"({rate / first:.0%} of the first), worker RSS {rss:.0f} MB"
        for size, (rate, rss) in results.items()
    ]
    print("\n".join(lines), flush=True)
    if args.record:
        append_section("backlog", "python -m bench.backlog --record", lines)


if __name__ == "__main__":
    main()
