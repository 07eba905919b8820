"""A running worker claims again as soon as a group of outcomes frees room, not at the
next poll: real database (SQLite and PostgreSQL), real sandbox over loopback HTTP,
Resend's batch endpoint.

The stall this guards against (issue #24, lever 2): a tenant at its in-flight cap whose
jobs finish together (one vendor batch call completes many at once) cannot be claimed
from until their outcomes are written, since the leases count against the cap. A claim
tried while that group was being written found nothing; the loop then wrote the last
outcomes and slept the whole poll interval, with work waiting and room free. Bulk
through the batch endpoint fell to a few claim rounds a poll interval.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from homing.models import JobStatus
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import jobs
from tests.conftest import TenantClient
from tests.e2e.conftest import SLACK_PATH, Sandbox, register
from tests.e2e.test_batch_sends import accept, emails
from tests.fixtures import settings_for

CAP = 40
JOBS = 6 * CAP
# Far longer than the whole drain may take: a worker that waits for the poll once fails.
POLL_SECONDS = 60.0
DRAIN_SECONDS = 30.0


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        provider_timeout_seconds=5,
        provider_deadline_seconds=5,
        alert_slack_webhook_url=sandbox.base_url + SLACK_PATH,
        # Emails leave in Resend batch calls (up to 100 each) gathered for 20 ms.
        batch_window_seconds=0.02,
        # Claims bigger than the tenant's cap and a concurrency that is not the limit:
        # the tenant's in-flight cap is what stops each claim round.
        claim_batch_size=30,
        worker_concurrency=4 * CAP,
        tenant_inflight=CAP,
        poll_interval_seconds=POLL_SECONDS,
    )


async def _completed(services: Services) -> int:
    query = select(func.count()).where(jobs.c.status == JobStatus.COMPLETED.value)
    async with services.db.transaction() as conn:
        return int((await conn.execute(query)).scalar_one())


async def test_a_tenant_at_its_cap_is_claimed_from_again_once_its_outcomes_are_written(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 0)
    for start in range(0, JOBS, 100):
        await accept(tenant, emails(min(100, JOBS - start)))
    stop = asyncio.Event()
    worker = services.worker()
    running = asyncio.create_task(worker.run(stop=stop))
    started = time.monotonic()
    try:
        while await _completed(services) < JOBS:
            assert not running.done(), running.result()
            elapsed = time.monotonic() - started
            assert elapsed < DRAIN_SECONDS, (
                f"{await _completed(services)} of {JOBS} completed after {elapsed:.1f} s:"
                " the worker waited for the poll with work waiting and room free"
            )
            await asyncio.sleep(0.05)
    finally:
        stop.set()
        services.wakeup.notify()
        await asyncio.wait_for(running, 30)
    # Every job in one call each way: the cap held (6 rounds at least), none sent twice.
    recorded = await sb.messages("resend")
    assert len(recorded) == JOBS
    assert len({m["job_id"] for m in recorded}) == JOBS
