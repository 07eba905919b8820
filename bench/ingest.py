"""Accepted requests/s at the API, with admission on, on SQLite and PostgreSQL.

    python -m bench.ingest [--backend sqlite|postgres|both] [--seconds S] [--clients C]
                           [--batch-size B] [--record]

Runs ``homing api`` in its own process (SQLite with in-memory rate windows; PostgreSQL
with Redis windows, as deployed) and drives it from C concurrent clients (default 64)
for S seconds each: first ``POST /v1/notifications/email``, every request with its own
``Idempotency-Key``; then ``POST /v1/notifications/email/batch`` with B messages a
request. Authentication, the rate limit (raised to 1,000,000/min so that it admits
everything but is still checked) and the monthly quota (an email quota of 10⁹, so the
conditional counter update runs) are all on. Prints one line per backend; ``--record``
appends them to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import httpx
from pydantic import SecretStr

from bench.common import POSTGRES_URL, append_section, fresh_postgres, percentile
from homing.crypto import generate_master_key
from homing.models import Plan
from homing.services import build
from homing.settings import Settings

REDIS_URL = os.environ.get("HOMING_BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
MESSAGE = {"to": "ada@example.com", "from": "bench@example.com", "subject": "Hi", "text": "x"}


@dataclass
class Run:
    accepted: int = 0
    failed: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _tenant_keys(settings: Settings, tenants: int) -> list[str]:
    services = await build(settings)
    keys = []
    try:
        for n in range(tenants):
            _tenant, key = await services.tenant_admin.create(
                f"bench-{n}",
                Plan.STARTUP,
                rate_limit_per_minute=1_000_000,
                quotas={"email": 1_000_000_000},
            )
            keys.append(key)
    finally:
        await services.aclose()
    return keys


async def _drop(url: str) -> None:
    name = url.rpartition("/")[2]
    admin = await asyncpg.connect(POSTGRES_URL.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


def _env(settings: Settings, secret_key: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOMING_")}
    env.update(
        HOMING_DATABASE_URL=settings.resolved_database_url,
        HOMING_PROVIDER_ALLOWED_NETWORKS="127.0.0.0/8,::1/128",
        HOMING_DATA_DIR=str(settings.data_dir),
        HOMING_SECRET_KEY=secret_key,
        HOMING_LOG_LEVEL="warning",
        HOMING_REDIS_KEY_PREFIX=settings.redis.key_prefix,
    )
    if settings.redis.url:
        env["HOMING_REDIS_URL"] = settings.redis.url
    return env


async def _until_up(client: httpx.AsyncClient, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("homing api exited during startup")
        try:
            if (await client.get("/healthz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError("homing api did not start")


async def _drive(
    seconds: float,
    clients: int,
    request: Callable[[int], httpx.Request],
    client: httpx.AsyncClient,
) -> tuple[Run, float]:
    run = Run()
    stop_at = time.perf_counter() + seconds

    async def lane(n: int) -> None:
        while time.perf_counter() < stop_at:
            t0 = time.perf_counter()
            try:
                response = await client.send(request(n))
            except httpx.TransportError as exc:
                run.failed[type(exc).__name__] += 1
                continue
            run.latencies.append(time.perf_counter() - t0)
            if response.status_code == 202:
                run.accepted += 1
            else:
                code = response.json().get("error", {}).get("code", "?")
                run.failed[f"{response.status_code} {code}"] += 1

    started = time.perf_counter()
    await asyncio.gather(*(lane(n) for n in range(clients)))
    return run, time.perf_counter() - started


async def _measure(
    client: httpx.AsyncClient, keys: list[str], args: argparse.Namespace
) -> tuple[str, str]:
    """Client ``n`` sends as tenant ``n % len(keys)``."""
    auth = [{"Authorization": f"Bearer {key}"} for key in keys]
    batch_body = {"messages": [MESSAGE] * args.batch_size}

    def single(n: int) -> httpx.Request:
        headers = {**auth[n % len(auth)], "Idempotency-Key": uuid.uuid4().hex}
        path = "/v1/notifications/email"
        return client.build_request("POST", path, json=MESSAGE, headers=headers)

    def batch(n: int) -> httpx.Request:
        path = "/v1/notifications/email/batch"
        return client.build_request("POST", path, json=batch_body, headers=auth[n % len(auth)])

    await _drive(2, args.clients, single, client)  # warm-up
    one, one_s = await _drive(args.seconds, args.clients, single, client)
    many, many_s = await _drive(args.seconds, args.clients, batch, client)
    if one.failed or many.failed:
        raise RuntimeError(f"requests refused: {dict(one.failed + many.failed)}")
    single_line = (
        f"single {one.accepted / one_s:,.0f} req/s "
        f"(p50 {percentile(one.latencies, 50) * 1000:.0f} ms, "
        f"p99 {percentile(one.latencies, 99) * 1000:.0f} ms)"
    )
    batch_line = (
        f"batch {many.accepted * args.batch_size / many_s:,.0f} msg/s "
        f"({args.batch_size}/request, {many.accepted / many_s:.1f} req/s, "
        f"p50 {percentile(many.latencies, 50) * 1000:.0f} ms)"
    )
    return single_line, batch_line


async def run_backend(backend: str, args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if backend == "sqlite":
            url, redis = f"sqlite+aiosqlite:///{workdir / 'ingest.db'}", None
        else:
            # A database of this run's own: another bench may run beside it.
            url, redis = await fresh_postgres(f"homing_bench_ingest_{os.getpid()}"), REDIS_URL
        secret_key = generate_master_key()
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            database_url=url,
            provider_allowed_networks="127.0.0.0/8,::1/128",
            data_dir=workdir,
            secret_key=SecretStr(secret_key),
            redis_url=redis,
            redis_key_prefix=f"bench-{uuid.uuid4().hex}",
        )
        keys = await _tenant_keys(settings, args.tenants)
        port = _free_port()
        log = workdir / "api.log"
        with log.open("wb") as sink:
            proc = subprocess.Popen(
                [sys.executable, "-m", "homing", "api", "--port", str(port)],
                env=_env(settings, secret_key),
                stdout=sink,
                stderr=sink,
            )
        # Idle connections expire before uvicorn's 5 s keep-alive, so none is reused
        # just as the server closes it.
        limits = httpx.Limits(
            max_connections=args.clients, max_keepalive_connections=args.clients, keepalive_expiry=2
        )
        try:
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}", timeout=120, limits=limits
            ) as client:
                await _until_up(client, proc)
                single_line, batch_line = await _measure(client, keys, args)
        except Exception:
            print(log.read_text(errors="replace")[-3000:], file=sys.stderr)
            raise
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            if backend == "postgres":
                await _drop(url)
    windows = "Redis" if redis else "memory"
    setup = f"{windows} rate windows, {args.clients} clients, {args.tenants} tenant(s)"
    # The machine may be shared; the load it carried qualifies the figures.
    setup += f", load {os.getloadavg()[0]:.1f}"
    return f"ingest {backend} ({setup}): {single_line}; {batch_line}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--tenants", type=int, default=1, help="clients are spread over these")
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    lines = []
    for backend in backends:
        line = asyncio.run(run_backend(backend, args))
        print(line, flush=True)
        lines.append(line)
    if args.record:
        append_section("ingest", "python -m bench.ingest --record", lines)


if __name__ == "__main__":
    main()
