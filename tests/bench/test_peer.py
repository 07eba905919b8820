"""A short smoke of the bench's Node.js BullMQ peer against the real sandbox, Redis and
PostgreSQL: a few dozen jobs each way, so it stays well under 30 s."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest

from bench import peers
from bench.peers import PeerQueue
from homing.sandbox.server import SandboxServer
from tests.conftest import POSTGRES_URL, REDIS_URL

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.skipif(
        peers.unavailable() is not None,
        reason=f"the bench's BullMQ peer needs Node.js: {peers.unavailable()}",
    ),
]
JOBS = 30


@pytest.fixture(scope="module")
def installed() -> None:
    peers.prepare()  # npm ci from the lockfile, once


@pytest.fixture
async def peer_db() -> AsyncIterator[str]:
    name = f"homing_peer_smoke_{os.getpid()}"
    admin_url = POSTGRES_URL.replace("postgresql+asyncpg://", "postgresql://")
    admin = await asyncpg.connect(admin_url)
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin_url.rpartition("/")[0] + f"/{name}"
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


@pytest.fixture
async def queue() -> AsyncIterator[PeerQueue]:
    queue = PeerQueue(redis_url=REDIS_URL)
    yield queue
    await peers.forget(queue)


async def _statuses(db: str) -> dict[str, int]:
    conn = await asyncpg.connect(db)
    try:
        rows = await conn.fetch("SELECT status, count(*) AS n FROM peer_jobs GROUP BY status")
    finally:
        await conn.close()
    return {row["status"]: row["n"] for row in rows}


@pytest.mark.usefixtures("installed")
async def test_seed_worker_sends_each_job_to_the_sandbox_and_completes_its_row(
    sandbox: SandboxServer, queue: PeerQueue, peer_db: str
) -> None:
    target = sandbox.provider_base_url("resend") + "/emails"

    filled = await asyncio.to_thread(peers.fill, queue, JOBS, "seed", peer_db)
    with peers.worker(queue, "seed", 5, target, peer_db, jobs=JOBS) as worker:
        result = await asyncio.to_thread(worker.wait, 60)

    assert filled["added"] == JOBS
    assert (result["completed"], result["failed"]) == (JOBS, 0)
    sent = sandbox.state.messages("resend")
    assert len({message.job_id for message in sent}) == JOBS
    assert await _statuses(peer_db) == {"COMPLETED": JOBS}


@pytest.mark.usefixtures("installed")
async def test_bare_and_noop_workers_drain_their_queues(
    sandbox: SandboxServer, queue: PeerQueue
) -> None:
    target = sandbox.provider_base_url("resend") + "/emails"

    for mode in ("bare", "noop"):
        await asyncio.to_thread(peers.fill, queue, JOBS, mode)
        with peers.worker(queue, mode, 100, target, jobs=JOBS) as worker:
            result = await asyncio.to_thread(worker.wait, 60)
        assert result["completed"] == JOBS

    assert len(sandbox.state.messages("resend")) == JOBS  # the no-op worker sends nothing


@pytest.mark.usefixtures("installed")
async def test_seed_api_writes_the_job_row_then_enqueues(queue: PeerQueue, peer_db: str) -> None:
    message = {"to": "a@example.com", "from": "b@example.com", "subject": "s", "text": "x"}
    auth = {"Authorization": f"Bearer {peers.API_KEY}"}

    with peers.server(queue, peer_db) as server:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.ready['port']}") as api:
            one = await api.post("/v1/notifications/email", json=message, headers=auth)
            batch = {"messages": [message] * 3}
            many = await api.post("/v1/notifications/email/batch", json=batch, headers=auth)
            refused = await api.post("/v1/notifications/email", json=message)
            invalid = await api.post("/v1/notifications/email", json={"to": "x"}, headers=auth)

    assert (one.status_code, one.json()["status"]) == (202, "PENDING")
    assert (many.status_code, many.json()) == (202, {"accepted": 3})
    assert (refused.status_code, invalid.status_code) == (401, 422)
    assert await _statuses(peer_db) == {"PENDING": 4}
    assert await peers.forget(queue) > 0, "the jobs were in the queue's keys"
