"""Shared bench plumbing: a sandbox in its own process, a fresh database, seeding."""

from __future__ import annotations

import asyncio
import math
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import httpx
import redis.asyncio as aioredis
from pydantic import SecretStr

from homing.channels import Channel
from homing.crypto import generate_master_key
from homing.domain.accepting import NewJob
from homing.managers.accounts import NewProvider
from homing.models import Plan, Priority, ProviderAccount, Queue, new_id
from homing.services import Services, build
from homing.settings import Settings
from homing.store.providers import seal_credentials

POSTGRES_URL = os.environ.get(
    "HOMING_BENCH_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
ROOT = Path(__file__).resolve().parent.parent
_TICKS = os.sysconf("SC_CLK_TCK")


def machine() -> str:
    """One line naming the machine: cores, memory, Python, OS."""
    mem_kb = 0
    with open("/proc/meminfo") as handle:
        for line in handle:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    return (
        f"{os.cpu_count()} cores, {mem_kb / 1024 / 1024:.0f} GiB, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}"
    )


def say(message: str) -> None:
    """One line of progress on stderr, with the time."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


async def fresh_postgres(name: str) -> str:
    plain = POSTGRES_URL.replace("postgresql+asyncpg://", "postgresql://")
    admin = await asyncpg.connect(plain)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return POSTGRES_URL.rpartition("/")[0] + f"/{name}"


async def drop_postgres(name: str) -> None:
    admin = await asyncpg.connect(POSTGRES_URL.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def database_url(backend: str, workdir: Path) -> str:
    if backend == "sqlite":
        return f"sqlite+aiosqlite:///{workdir / 'bench.db'}"
    return await fresh_postgres("homing_bench")


@dataclass
class SandboxProcess:
    url: str
    proc: subprocess.Popen[bytes]

    def provider_url(self, provider: str) -> str:
        return f"{self.url}/{provider}"


@asynccontextmanager
async def sandbox_process(port: int) -> AsyncIterator[SandboxProcess]:
    """``homing sandbox`` in its own process, so it does not share our event loop.

    The port must be free: a sandbox left running by an interrupted run would answer in
    its place, with its counts, so that is refused rather than measured."""
    with socket.socket() as sock:
        # As the server binds: a port in TIME_WAIT after the last run is free, a listener not.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            raise RuntimeError(
                f"port {port} is taken (a sandbox left by an earlier run?): free it or pass --port"
            ) from None
    proc = subprocess.Popen(
        [sys.executable, "-m", "homing", "sandbox", "--port", str(port), "--smtp-port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as client:
            # Up to a minute: on a loaded machine the first start (imports) is slow.
            for _ in range(1200):
                if proc.poll() is not None:
                    raise RuntimeError(f"the sandbox exited with {proc.returncode}")
                try:
                    if (await client.get(f"{url}/_sandbox/stats")).status_code == 200:
                        break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
            else:
                raise RuntimeError("the sandbox did not start")
        yield SandboxProcess(url, proc)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def services_for(
    url: str, workdir: Path, secret_key: str | None = None, **overrides: object
) -> Services:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=url,
        provider_allowed_networks="127.0.0.0/8,::1/128",
        data_dir=workdir,
        secret_key=SecretStr(secret_key or generate_master_key()),
        **overrides,  # type: ignore[arg-type]
    )
    return await build(settings)


@contextmanager
def worker_process(url: str, secret_key: str, workdir: Path, **env: str) -> Iterator[int]:
    """``homing worker`` in its own process against ``url``; stopped with SIGTERM."""
    with homing_process("worker", url, secret_key, workdir, **env) as pid:
        yield pid


@contextmanager
def homing_process(
    command: str, url: str, secret_key: str, workdir: Path, **env: str
) -> Iterator[int]:
    """``homing COMMAND`` (``worker``, ``api``, ``run``) in its own process against
    ``url``, logging to ``workdir/COMMAND.log``; stopped with SIGTERM."""
    argv = [sys.executable, "-m", "homing", command]
    with bench_process(argv, command, url, secret_key, workdir, **env) as pid:
        yield pid


@contextmanager
def bench_process(
    argv: list[str], name: str, url: str, secret_key: str, workdir: Path, **env: str
) -> Iterator[int]:
    """``argv`` in its own process with Homing's settings for ``url`` (as
    ``homing_process`` gives them), logging to ``workdir/NAME.log``; stopped with SIGTERM."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HOMING_")}
    environ |= {
        "HOMING_DATABASE_URL": url,
        "HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "HOMING_SECRET_KEY": secret_key,
        "HOMING_DATA_DIR": str(workdir),
        "HOMING_LOG_LEVEL": "warning",
        **env,
    }
    log = (workdir / f"{name}.log").open("ab")
    proc = subprocess.Popen(argv, env=environ, stdout=log, stderr=log)
    try:
        yield proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()


async def delete_redis_keys(url: str, prefix: str) -> int:
    """Delete every key under ``prefix:`` in the Redis database at ``url``; how many."""
    client = aioredis.Redis.from_url(url)
    deleted = 0
    try:
        batch: list[bytes] = []
        async for key in client.scan_iter(match=f"{prefix}:*", count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                deleted += await client.unlink(*batch)
                batch.clear()
        if batch:
            deleted += await client.unlink(*batch)
    finally:
        await client.aclose()
    return deleted


def rss_mb(pid: int) -> float:
    """The resident set size of process ``pid`` in MiB."""
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def seed_bulk(services: Services, tenant_id: str, count: int, chunk: int = 1000) -> None:
    """Accept ``count`` jobs in batches of ``chunk`` (one transaction each)."""
    payload = {"to": "a@example.com", "from": "b@example.com", "subject": "bulk", "text": "x"}
    job = NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload=payload,
    )
    for start in range(0, count, chunk):
        await services.batches.accept_many([job] * min(chunk, count - start))


async def received(sandbox_url: str, provider: str = "resend") -> int:
    async with httpx.AsyncClient() as client:
        stats = (await client.get(f"{sandbox_url}/_sandbox/stats")).json()
    return int(stats["received"].get(provider, 0))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[index]


def print_and_record(lines: list[str], *, record: bool, module: str, title: str) -> None:
    """Print ``lines``; with ``record``, append them to docs/benchmarks.md under
    ``title``, with the command as it was typed (``python -m MODULE`` and its arguments)."""
    print("\n".join(lines), flush=True)
    if record:
        append_section(title, " ".join([f"python -m {module}", *sys.argv[1:]]), lines)


# The heading of docs/benchmarks.md's recorded sections, newest first.
HISTORY = "\n## History\n"


def append_section(title: str, command: str, lines: list[str], versions: str = "") -> None:
    """Add a dated section with the machine (and ``versions``) to docs/benchmarks.md: at
    the top of its "History" (newest first), or at the end of a page without one."""
    more = f", {versions}" if versions else ""
    section = "\n".join(
        [
            f"\n### {title} — {today()}\n",
            f"Machine: {machine()}{more}. Command: `{command}`.\n",
            "```",
            *lines,
            "```\n",
        ]
    )
    page = ROOT / "docs" / "benchmarks.md"
    text = page.read_text()
    history = text.find(HISTORY)
    first = text.find("\n### ", history + len(HISTORY)) if history >= 0 else -1
    page.write_text(text + section if first < 0 else text[:first] + section + text[first:])


async def tenant_with_provider(services: Services, sandbox: SandboxProcess) -> str:
    tenant, _ = await services.tenants.create("bench", Plan.STARTUP)
    await register_resend(services, tenant.id, sandbox)
    return tenant.id


async def unlimited_tenant_with_provider(
    services: Services, sandbox: SandboxProcess
) -> tuple[str, str]:
    """(tenant id, API key) of a STARTUP tenant whose rate limit (1,000,000/min) and
    email quota (10⁹) admit everything while still being checked, with one Resend
    account pointed at ``sandbox``."""
    tenant, key = await services.tenant_admin.create(
        "bench", Plan.STARTUP, rate_limit_per_minute=1_000_000, quotas={"email": 1_000_000_000}
    )
    await register_resend(services, tenant.id, sandbox)
    return tenant.id, key


async def register_resend(services: Services, tenant_id: str, sandbox: SandboxProcess) -> None:
    await services.accounts.register(
        NewProvider(
            tenant_id=tenant_id,
            channel=Channel.EMAIL,
            provider="resend",
            credentials={"api_key": "re_bench_key_000000"},
            config={"base_url": sandbox.provider_url("resend")},
            priority=1,
        )
    )


async def store_resend(services: Services, tenant_id: str) -> ProviderAccount:
    """A Resend account stored for the tenant without asking Resend (never sent through):
    what the accept cases need, a send no provider could deliver being refused."""
    account_id = new_id()
    sealed = seal_credentials(services.sealer, account_id, {"api_key": "re_bench_key_000000"})
    account = ProviderAccount(
        id=account_id,
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        vendor="resend",
        priority=1,
        enabled=True,
        credentials_sealed=sealed,
        credentials_preview="re_…0000",
        config={"base_url": "http://127.0.0.1:9"},
        created_at=datetime.now(UTC),
    )
    return await services.providers.add(account)


async def seed(services: Services, tenant_id: str, count: int, concurrency: int = 16) -> float:
    """Accept ``count`` jobs through the store; returns accepted per second."""
    payload = {"to": "a@example.com", "from": "b@example.com", "subject": "bench", "text": "x"}
    job = NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload=payload,
    )
    remaining = count
    started = time.perf_counter()

    async def one_lane(n: int) -> None:
        for _ in range(n):
            await services.jobs.accept(job)

    lanes = [
        remaining // concurrency + (1 if i < remaining % concurrency else 0)
        for i in range(concurrency)
    ]
    await asyncio.gather(*(one_lane(n) for n in lanes))
    return count / (time.perf_counter() - started)


def cpu_seconds(pids: list[int]) -> float:
    """CPU seconds (user and system) that the processes ``pids`` have used so far."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # gone (a short-lived backend)
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / _TICKS


def postgres_pids() -> list[int]:
    """This machine's PostgreSQL processes (none when it runs elsewhere)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in ("postgres", "postmaster"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids
