"""Deliveries per second through the sandbox (no latency), on SQLite and PostgreSQL.

    python -m bench.deliver [--jobs N] [--backend sqlite|postgres|both] [--record]

Seeds N jobs for one tenant with one Resend account pointed at a sandbox running in
its own process, then times one worker (default settings) draining them. Prints one
line per backend; ``--record`` appends the figures to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from bench.common import (
    append_section,
    database_url,
    drop_postgres,
    sandbox_process,
    seed,
    services_for,
    tenant_with_provider,
)
from homing.domain.job_search import JobFilter
from homing.models import JobStatus


async def run_backend(backend: str, jobs: int, port: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        url = await database_url(backend, workdir)
        services = await services_for(url, workdir)
        try:
            async with sandbox_process(port) as sandbox:
                tenant_id = await tenant_with_provider(services, sandbox)
                accept_rate = await seed(services, tenant_id, jobs)
                started = time.perf_counter()
                delivered = await services.worker().run(once=True)
                elapsed = time.perf_counter() - started
            found = JobFilter(tenant_id=tenant_id, status=JobStatus.COMPLETED)
            page = await services.jobs.page(found, limit=1)
            assert page.jobs, "no job completed"
            assert delivered == jobs, f"delivered {delivered} of {jobs}"
        finally:
            await services.aclose()
            if backend == "postgres":
                await drop_postgres("homing_bench")
    return {"jobs": jobs, "seconds": elapsed, "per_second": jobs / elapsed, "accept": accept_rate}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--port", type=int, default=18025)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    lines = []
    for backend in backends:
        result = asyncio.run(run_backend(backend, args.jobs, args.port))
        line = (
            f"deliver {backend}: {result['per_second']:.0f} deliveries/s "
            f"({result['jobs']:.0f} jobs in {result['seconds']:.2f} s; "
            f"seeding accepted {result['accept']:.0f}/s)"
        )
        print(line, flush=True)
        lines.append(line)
    if args.record:
        append_section("deliver", "python -m bench.deliver --record", lines)


if __name__ == "__main__":
    main()
