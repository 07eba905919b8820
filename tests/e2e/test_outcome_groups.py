"""Outcomes written in groups (HOMING_OUTCOME_WINDOW_SECONDS): real worker processes.

A group of outcomes is only a transaction: a worker killed before it commits loses no
job and leaves no half-recorded one (the leases run out, the jobs are claimed again and
each ends with one recorded success), and several workers writing groups side by side
never record one job twice.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from homing.clock import ManualClock
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import attempts, jobs, queue_entries
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, job, register, send
from tests.metrics_helpers import scrape, value
from tests.processes import HomingProcess, eventually, free_port, homing_workers, process_env

JOBS = 12


async def _statuses(services: Services, ids: list[str]) -> Counter[str]:
    query = select(jobs.c.status).where(jobs.c.id.in_(ids))
    async with services.db.transaction() as conn:
        return Counter(row.status for row in await conn.execute(query))


async def _successes(services: Services, ids: list[str]) -> Counter[str]:
    """Recorded successful attempts per job."""
    query = (
        select(attempts.c.job_id, func.count())
        .where(attempts.c.job_id.in_(ids), attempts.c.outcome == "success")
        .group_by(attempts.c.job_id)
    )
    async with services.db.transaction() as conn:
        return Counter({row[0]: row[1] for row in await conn.execute(query)})


async def _last_lease_end(services: Services) -> float:
    async with services.db.transaction() as conn:
        query = select(func.max(queue_entries.c.available_at))
        return float((await conn.execute(query)).scalar_one())


async def test_a_worker_killed_with_outcomes_waiting_loses_no_job_and_records_each_once(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
    settings: Settings,
    secret_key: str,
    tmp_path: Path,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    # One send hangs, so a delivery stays in flight and the others' outcomes wait for
    # the (long) window instead of being written at once.
    await sb.fault("resend", mode="accept_then_hang", count=1)
    ids = [await send(tenant, subject=f"grouped {i}") for i in range(JOBS)]
    port = free_port()
    env = process_env(
        settings,
        secret_key,
        HOMING_LEASE_SECONDS="30",
        HOMING_PROVIDER_TIMEOUT_SECONDS="120",
        HOMING_OUTCOME_WINDOW_SECONDS="10",
        HOMING_METRICS_PORT=str(port),
    )
    worker = HomingProcess(["worker"], env, tmp_path / "worker.log").start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:

            async def answered() -> bool:
                # Every send but the hanging one answered, in the worker's own count.
                try:
                    text = await scrape(client)
                except httpx.TransportError:
                    return False
                ok = {"channel": "email", "provider": "resend", "outcome": "success"}
                return value(text, "homing_provider_calls_total", **ok) == JOBS - 1

            await eventually(answered, timeout=90, what="every send but one to be answered")
            # Their outcomes wait for the window (10 s): for a second, none is written
            # (with no window they are, within milliseconds).
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                assert await _statuses(services, ids) == Counter({"PROCESSING": JOBS})
    finally:
        worker.kill()
    # The provider took every job, but the worker died before its group committed.
    assert len(await sb.messages("resend")) == JOBS
    assert await _statuses(services, ids) == Counter({"PROCESSING": JOBS})
    assert await _successes(services, ids) == Counter()
    assert await deliver(services) == 0, "the dead worker's leases still hold the jobs"
    # The dead worker renewed its leases while it ran: move past the last one.
    clock.advance(await _last_lease_end(services) - clock.now() + 1)
    assert await deliver(services) == JOBS
    assert await _statuses(services, ids) == Counter({"COMPLETED": JOBS})
    assert await _successes(services, ids) == Counter({job_id: 1 for job_id in ids})
    for job_id in ids:
        body = await job(tenant, job_id)
        # The dead worker's call is in the history too, its outcome unknown.
        assert [(a["number"], a["outcome"]) for a in body["attempts"]] == [
            (1, "unknown"),
            (2, "success"),
        ]
    # Each resend carried its job's Idempotency-Key: the provider delivered each once.
    keys = Counter(m["idempotency_key"] for m in await sb.messages("resend"))
    assert keys == Counter({f"homing-{job_id}": 1 for job_id in ids})


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_workers_writing_groups_side_by_side_complete_each_job_once(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    settings: Settings,
    secret_key: str,
    tmp_path: Path,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", latency_ms=5)
    ids = [await send(tenant, subject=f"side by side {i}") for i in range(150)]
    # Small claims and a long window: the three workers' claims and groups interleave.
    env = process_env(
        settings,
        secret_key,
        HOMING_CLAIM_BATCH_SIZE="8",
        HOMING_WORKER_CONCURRENCY="16",
        HOMING_OUTCOME_WINDOW_SECONDS="0.2",
    )
    with homing_workers(3, env, tmp_path):

        async def finished() -> bool:
            return (await _statuses(services, ids))["COMPLETED"] == len(ids)

        await eventually(finished, timeout=90, what="every job to complete")
    assert await _successes(services, ids) == Counter({job_id: 1 for job_id in ids})
    sent = Counter(m["idempotency_key"] for m in await sb.messages("resend"))
    assert sent == Counter({f"homing-{job_id}": 1 for job_id in ids})
