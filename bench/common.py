"""Shared bench plumbing: a sandbox in its own process, a fresh database, seeding."""

from __future__ import annotations

import asyncio
import os
import platform
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import httpx

from homing.accounts import NewProvider
from homing.crypto import generate_master_key
from homing.models import Channel, Plan, Priority, Queue
from homing.services import Services, build
from homing.settings import Settings
from homing.store.jobs import NewJob

POSTGRES_URL = os.environ.get(
    "HOMING_BENCH_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
ROOT = Path(__file__).resolve().parent.parent


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
    """``homing sandbox`` in its own process, so it does not share our event loop."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "homing", "sandbox", "--port", str(port), "--smtp-port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as client:
            for _ in range(200):
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


async def services_for(url: str, workdir: Path, **overrides: object) -> Services:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=url,
        data_dir=workdir,
        secret_key=generate_master_key(),
        **overrides,  # type: ignore[arg-type]
    )
    return await build(settings)


async def tenant_with_provider(services: Services, sandbox: SandboxProcess) -> str:
    tenant, _ = await services.tenants.create("bench", Plan.STARTUP)
    await services.accounts.register(
        NewProvider(
            tenant_id=tenant.id,
            channel=Channel.EMAIL,
            provider="resend",
            credentials={"api_key": "re_bench_key_000000"},
            config={"base_url": sandbox.provider_url("resend")},
            priority=1,
        )
    )
    return tenant.id


async def seed(services: Services, tenant_id: str, count: int, concurrency: int = 16) -> float:
    """Accept ``count`` jobs through the store; returns accepted per second."""
    payload = {"to": "a@example.com", "from": "b@example.com", "subject": "bench", "text": "x"}
    job = NewJob(tenant_id, Channel.EMAIL, Queue.EMAIL, Priority.NORMAL, payload)
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
