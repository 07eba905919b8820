"""PostgreSQL restarted under a steady load: 503 while it is down, nothing lost.

A real ``homing api`` and two ``homing worker`` processes run against a PostgreSQL
cluster of the test's own (tests/outage/servers.py), which is stopped and started
again while a client keeps sending. While the database is down every answer must be
503 ``unavailable`` with ``Retry-After`` (never a 500, never a hang); the API must come
back by itself; every job answered 202 must be delivered; the workers must live on.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from homing.channels import Channel
from homing.crypto import generate_master_key
from homing.errors import StoreUnavailable
from homing.managers.accounts import NewProvider
from homing.models import JobStatus, Plan
from homing.sandbox.server import SandboxServer
from homing.services import Services, build
from homing.store.tables.core import jobs
from tests.figures import record
from tests.fixtures import HOMING_TIMING, settings_for
from tests.outage.servers import PostgresCluster
from tests.processes import HomingProcess, eventually, free_port

pytestmark = pytest.mark.slow

OUTAGE_SECONDS = 5.0
EMAIL = {"to": "ada@example.com", "from": "hello@acme.example", "subject": "s", "text": "t"}


@dataclass
class Load:
    """What a steady sender saw: accepted job ids and every refusal."""

    accepted: list[str] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    unavailable: int = 0


async def _send_steadily(client: httpx.AsyncClient, load: Load, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            response = await client.post("/v1/notifications/email", json=EMAIL)
        except httpx.HTTPError as exc:
            load.problems.append(f"no answer: {type(exc).__name__}")
            continue
        load.statuses[response.status_code] += 1
        if response.status_code == 202:
            load.accepted.append(response.json()["id"])
        elif response.status_code == 503:
            load.unavailable += 1
            _check_unavailable(response, load)
        else:
            load.problems.append(f"{response.status_code}: {response.text[:200]}")
        await asyncio.sleep(0.01)  # a steady rate, not synchronisation


def _check_unavailable(response: httpx.Response, load: Load) -> None:
    error = response.json().get("error", {})
    if error.get("code") != "unavailable" or set(error) != {"code", "message", "details"}:
        load.problems.append(f"503 outside the contract: {response.text[:200]}")
    if not response.headers.get("Retry-After", "").isdigit():
        load.problems.append("503 without Retry-After")


async def _setup(cluster: PostgresCluster, key: str, sandbox: SandboxServer, tmp: Path) -> Any:
    settings = settings_for(cluster.url, tmp, key, **HOMING_TIMING)
    services = await build(settings)
    tenant, api_key = await services.tenants.create(
        "steady", Plan.STARTUP, rate_limit_per_minute=1_000_000
    )
    await services.accounts.register(
        NewProvider(
            tenant_id=tenant.id,
            channel=Channel.EMAIL,
            provider="resend",
            credentials={"api_key": "re_outage_0123456789"},
            config={"base_url": sandbox.provider_base_url("resend")},
            priority=1,
        )
    )
    return services, api_key


def _env(cluster: PostgresCluster, key: str, tmp: Path) -> dict[str, str]:
    return {
        "HOMING_DATABASE_URL": cluster.url,
        "HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "HOMING_SECRET_KEY": key,
        "HOMING_DATA_DIR": str(tmp / "data"),
        "HOMING_LEASE_SECONDS": "5",
        "HOMING_POLL_INTERVAL_SECONDS": "0.2",
        "HOMING_RETRY_BASE_SECONDS": "0.2",
        "HOMING_RETRY_MAX_SECONDS": "2",
        "HOMING_MAX_ATTEMPTS": "10",
        "HOMING_PROVIDER_TIMEOUT_SECONDS": "2",
        "HOMING_AUTH_CACHE_SECONDS": "0.5",
    }


async def _health(client: httpx.AsyncClient) -> int:
    try:
        return (await client.get("/healthz")).status_code
    except httpx.HTTPError:
        return 0


async def _all_delivered(sb: httpx.AsyncClient, ids: list[str]) -> bool:
    messages = (await sb.get("/_sandbox/messages")).json()
    return set(ids) <= {m["job_id"] for m in messages}


async def test_postgres_restart_answers_503_then_recovers_and_loses_nothing(
    pg_cluster: PostgresCluster, sandbox: SandboxServer, tmp_path: Path
) -> None:
    key = generate_master_key()
    services, api_key = await _setup(pg_cluster, key, sandbox, tmp_path)
    env, port = _env(pg_cluster, key, tmp_path), free_port()
    processes = [HomingProcess(["api", "--port", str(port)], env, tmp_path / "api.log").start()]
    processes += [
        HomingProcess(["worker"], env, tmp_path / f"worker{i}.log").start() for i in range(2)
    ]
    load, stop = Load(), asyncio.Event()
    try:
        async with (
            httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}",
                timeout=15,
                headers={"Authorization": f"Bearer {api_key}"},
            ) as client,
            httpx.AsyncClient(base_url=sandbox.base_url, timeout=15) as sb,
        ):
            await eventually(lambda: _is(client, 200), timeout=30, what="the API to listen")
            sender = asyncio.create_task(_send_steadily(client, load, stop))
            await eventually(lambda: _count(load, 50), timeout=30, what="steady load")
            await asyncio.to_thread(pg_cluster.stop, "fast")
            down_at = time.monotonic()
            await eventually(lambda: _is(client, 503), timeout=20, what="healthz to say 503")
            # The outage is the scenario: hold it for OUTAGE_SECONDS, under load.
            await eventually(
                lambda: _unavailable(load, 20, down_at), timeout=60, what="503s under load"
            )
            await asyncio.to_thread(pg_cluster.start)
            outage = time.monotonic() - down_at
            accepted_before = len(load.accepted)
            await eventually(
                lambda: _count(load, accepted_before + 50), timeout=60, what="recovery"
            )
            stop.set()
            await sender
            await eventually(
                lambda: _all_delivered(sb, load.accepted),
                timeout=120,
                what="every accepted job to be delivered",
            )
            await eventually(
                lambda: _all_completed(services, load.accepted),
                timeout=60,
                what="every delivered job to be recorded COMPLETED",
            )
            duplicates = await _duplicates(sb)
        statuses = await _statuses(services, load.accepted)
        alive = [p.proc is not None and p.proc.poll() is None for p in processes]
    finally:
        stop.set()
        for process in processes:
            process.stop()
        await services.aclose()
    record(
        "outage-postgres",
        accepted=len(load.accepted),
        unavailable=load.unavailable,
        outage_seconds=round(outage, 1),
        statuses=dict(load.statuses),
        problems=len(load.problems),
        lost=statuses["missing"],
        duplicates=duplicates,
    )
    assert not load.problems, load.problems[:10]
    assert statuses == {JobStatus.COMPLETED.value: len(load.accepted)}
    assert duplicates == 0, "Resend's Idempotency-Key keeps a resend from delivering twice"
    assert all(alive), [
        p.output()[-3000:] for p, up in zip(processes, alive, strict=True) if not up
    ]


async def _is(client: httpx.AsyncClient, status: int) -> bool:
    return await _health(client) == status


async def _count(load: Load, n: int) -> bool:
    return len(load.accepted) >= n


async def _unavailable(load: Load, n: int, since: float) -> bool:
    return load.unavailable >= n and time.monotonic() - since >= OUTAGE_SECONDS


async def _duplicates(sb: httpx.AsyncClient) -> int:
    messages = (await sb.get("/_sandbox/messages")).json()
    counts = Counter(m["job_id"] for m in messages)
    return sum(n - 1 for n in counts.values())


async def _all_completed(services: Services, ids: list[str]) -> bool:
    try:
        statuses = await _statuses(services, ids)
    except StoreUnavailable:
        # This process's own pool held connections across the restart: the first use
        # of a dead one fails once (a 503 to an API client), then the pool reconnects.
        return False
    return statuses == {JobStatus.COMPLETED.value: len(ids)}


async def _statuses(services: Services, ids: list[str]) -> Counter[str]:
    """How many of ``ids`` are in each status ("missing": no such job at all)."""
    async with services.db.transaction() as conn:
        rows = (await conn.execute(select(jobs.c.id, jobs.c.status))).all()
    by_id = {row.id: row.status for row in rows}
    return Counter(by_id.get(job_id, "missing") for job_id in ids)
