"""Successes a worker holds through a PostgreSQL outage are recorded, never resent.

A real ``homing worker`` sends 20 ``at_most_once`` emails through SendGrid (no
idempotency key); the sandbox holds each call for seconds, and PostgreSQL is stopped
while they are held and started again 10 s after the worker first fails to
record their answers. The vendor took every message, but
the worker cannot record a thing meanwhile. It must keep those successes (renewing
their leases once it can) and record them when the database is back: each message
reached the vendor once, and every job ends COMPLETED. Before, the worker dropped them
after about 6 s of retries ("outcomes not recorded"), the leases (60 s, the default)
ran out and all 20 were sent again. The outage is counted from the worker's first
failed write, so it always outlasts those 6 s.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from homing.api.app import create_app
from homing.channels import Channel
from homing.crypto import generate_master_key
from homing.errors import StoreUnavailable
from homing.managers.accounts import NewProvider
from homing.models import JobStatus, Plan
from homing.sandbox.server import SandboxServer
from homing.services import Services, build
from homing.store.tables.core import jobs
from tests.fixtures import Sandbox, settings_for
from tests.outage.servers import PostgresCluster
from tests.processes import HomingProcess, eventually

pytestmark = pytest.mark.slow

JOBS = 20
OUTAGE_SECONDS = 10.0
HELD_MS = 5_000  # each call: long enough to stop PostgreSQL before any is answered
HELD_ON = "recording outcomes failed"


@pytest.fixture
def secret() -> str:
    return generate_master_key()


@pytest.fixture
async def homing(
    pg_cluster: PostgresCluster, tmp_path: Path, secret: str
) -> AsyncIterator[Services]:
    services = await build(settings_for(pg_cluster.url, tmp_path, secret))
    try:
        yield services
    finally:
        await services.aclose()


async def _accept(services: Services, sandbox: SandboxServer) -> list[str]:
    tenant, key = await services.tenants.create("held", Plan.STARTUP)
    await services.accounts.register(
        NewProvider(
            tenant_id=tenant.id,
            channel=Channel.EMAIL,
            provider="sendgrid",
            credentials={"api_key": "SG.outage-0123456789"},
            config={"base_url": sandbox.provider_base_url("sendgrid")},
            priority=1,
        )
    )
    transport = httpx.ASGITransport(app=create_app(services))
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://homing.test", headers=headers
    ) as api:
        ids = []
        for i in range(JOBS):
            email = {"to": f"u{i}@example.com", "from": "a@acme.example", "subject": "s"}
            body = {**email, "text": "t", "delivery": "at_most_once"}
            response = await api.post("/v1/notifications/email", json=body)
            assert response.status_code == 202, response.text
            ids.append(response.json()["id"])
    return ids


async def _requested(sb: Sandbox, n: int) -> bool:
    stats = (await sb.http.get("/_sandbox/stats")).json()
    return int(stats["requests"]["sendgrid"]) >= n


async def _statuses(services: Services, ids: list[str]) -> Counter[str] | None:
    try:
        async with services.db.transaction() as conn:
            rows = (await conn.execute(select(jobs.c.id, jobs.c.status))).all()
    except StoreUnavailable:
        return None  # this process's pool held connections across the restart
    by_id = {row.id: row.status for row in rows}
    return Counter(by_id.get(job_id, "missing") for job_id in ids)


async def test_successes_held_through_a_postgres_outage_are_recorded_and_never_resent(
    pg_cluster: PostgresCluster,
    homing: Services,
    sandbox: SandboxServer,
    sb: Sandbox,
    secret: str,
    tmp_path: Path,
) -> None:
    ids = await _accept(homing, sandbox)
    await sb.fault("sendgrid", latency_ms=HELD_MS)
    env = {
        "HOMING_DATABASE_URL": pg_cluster.url,
        "HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "HOMING_SECRET_KEY": secret,
        "HOMING_DATA_DIR": str(tmp_path / "worker"),
        "HOMING_POLL_INTERVAL_SECONDS": "0.2",
        "HOMING_PROVIDER_TIMEOUT_SECONDS": "30",
    }
    worker = HomingProcess(["worker"], env, tmp_path / "worker.log").start()
    try:
        await eventually(lambda: _requested(sb, JOBS), timeout=60, what="every call under way")
        await asyncio.to_thread(pg_cluster.stop, "fast")

        async def holding() -> float | None:
            # The vendor answered and the worker failed to record it: it holds them.
            return time.monotonic() if HELD_ON in worker.output() else None

        held_at = await eventually(holding, timeout=60, what="the worker to hold outcomes")

        async def outage_over() -> bool:
            # The outage is the scenario: it lasts OUTAGE_SECONDS past the first
            # failed write, longer than the worker used to keep trying.
            return time.monotonic() - held_at >= OUTAGE_SECONDS

        await eventually(outage_over, timeout=60, what="the outage to last")
        assert len(await sb.messages("sendgrid")) == JOBS, "the vendor took every message"
        await asyncio.to_thread(pg_cluster.start)
        completed = Counter({JobStatus.COMPLETED.value: JOBS})

        async def recorded() -> bool:
            return await _statuses(homing, ids) == completed

        await eventually(recorded, timeout=90, what="every job COMPLETED")
    finally:
        assert worker.stop() == 0, worker.output()[-3000:]
    sent = Counter(m["job_id"] for m in await sb.messages("sendgrid"))
    assert sent == Counter(dict.fromkeys(ids, 1)), "each message reached the vendor once"
    assert "outcomes not recorded" not in worker.output()
