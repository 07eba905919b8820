"""Delivery rate against the size of the backlog (PostgreSQL).

    python -m bench.backlog [--sizes 10000,1000000] [--scheduled 0,1000000]
                            [--seconds 15] [--record]

For each size: a fresh database with SIZE jobs waiting (inserted in bulk by SQL),
one worker process, and the sandbox in its own process. After a warm-up, counts
deliveries over SECONDS and samples the worker's RSS. Target: the rate with
1,000,000 waiting is at least 80% of the rate with 10,000.

``--scheduled`` adds, for each size, runs with that many more jobs scheduled a day
ahead (``send_at``, docs/scheduling.md) for a second tenant: they must cost the worker
nothing until they are due, so the rate with a million of them stays the rate without.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from sqlalchemy import text

from bench.common import (
    drop_postgres,
    fresh_postgres,
    print_and_record,
    received,
    rss_mb,
    sandbox_process,
    services_for,
    tenant_with_provider,
    worker_process,
)
from homing.crypto import generate_master_key

# SIZE jobs of one tenant waiting, due now (bench.scaleout seeds each of its tenants so).
SEED_WAITING = [
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
]

_SEED = [
    *SEED_WAITING,
    "ANALYZE jobs",
    "ANALYZE queue_entries",
]

# Jobs of another tenant scheduled a day ahead: PENDING, their queue entries due then.
_SCHEDULED = [
    """
    INSERT INTO jobs (id, tenant_id, channel, queue, status, priority, payload, delivery,
                      attempts_made, skipped_providers, created_at, updated_at, send_at,
                      schedule_reason)
    SELECT gen_random_uuid()::text, :tenant, 'email', 'notifications-email', 'PENDING', 1,
           '{"to": "a@example.com", "from": "b@example.com", "subject": "s", "text": "t"}',
           'at_least_once', 0, '[]', now(), now(), now() + interval '1 day', 'requested'
    FROM generate_series(1, :n)
    """,
    """
    INSERT INTO queue_entries (job_id, tenant_id, queue, priority, available_at, attempts,
                               deferred_seconds, created_at)
    SELECT id, tenant_id, queue, priority, extract(epoch from send_at), 0, 0,
           extract(epoch from now())
    FROM jobs WHERE tenant_id = :tenant
    """,
]


async def measure(size: int, seconds: float, port: int, scheduled: int = 0) -> tuple[float, float]:
    """(deliveries per second, worker RSS in MB) with ``size`` jobs waiting and
    ``scheduled`` more of another tenant's due a day later."""
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        url = await fresh_postgres("homing_bench_backlog")
        secret = generate_master_key()
        services = await services_for(url, workdir, secret)
        try:
            async with sandbox_process(port) as sandbox:
                tenant = await tenant_with_provider(services, sandbox)
                later = await tenant_with_provider(services, sandbox) if scheduled else ""
                async with services.db.transaction() as conn:
                    if scheduled:
                        for statement in _SCHEDULED:
                            await conn.execute(text(statement), {"tenant": later, "n": scheduled})
                    for statement in _SEED:
                        await conn.execute(text(statement), {"tenant": tenant, "n": size})
                with worker_process(url, secret, workdir) as pid:
                    while await received(sandbox.url) < 500:
                        await asyncio.sleep(0.1)
                    start_count, started = await received(sandbox.url), time.monotonic()
                    await asyncio.sleep(seconds)
                    delivered = await received(sandbox.url) - start_count
                    rate = delivered / (time.monotonic() - started)
                    rss = rss_mb(pid)
        finally:
            await services.aclose()
            await drop_postgres("homing_bench_backlog")  # a million rows: not left behind
    return rate, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--scheduled", default="0")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--port", type=int, default=18032)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    runs = [
        (int(size), int(later))
        for size in args.sizes.split(",")
        for later in args.scheduled.split(",")
    ]
    results = {
        (size, later): asyncio.run(measure(size, args.seconds, args.port, later))
        for size, later in runs
    }
    first = results[runs[0]][0]
    lines = [
        f"backlog postgres: {size:>9,} waiting, {later:>9,} scheduled a day ahead → "
        f"{rate:7.0f} deliveries/s ({rate / first:.0%} of the first), worker RSS {rss:.0f} MB"
        for (size, later), (rate, rss) in results.items()
    ]
    print_and_record(lines, record=args.record, module="bench.backlog", title="backlog")


if __name__ == "__main__":
    main()
