"""The worker renews the leases of its in-flight jobs, and stops a call whose claim
another worker took; on SQLite and PostgreSQL, with a stub sender that never answers
until told to."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import func, select, update

from homing.channels import Channel
from homing.clock import ManualClock
from homing.dispatch.dispatcher import Dispatcher
from homing.dispatch.passes import PassRunner
from homing.dispatch.worker import Worker, WorkerConfig
from homing.domain.accepting import NewJob
from homing.models import Job, JobStatus, Plan, Priority, ProviderAccount, Queue
from homing.providers.base import SendResult
from homing.services import Services
from homing.store.tables.core import attempts, queue_entries
from tests.processes import eventually
from tests.store_helpers import claim

# Real seconds: the heartbeat ticks every third of it.
LEASE = 0.3


class Held:
    """A sender that holds its call open until ``release`` is set."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False

    def supports_idempotency(self, account: ProviderAccount) -> bool:
        return False

    async def send(self, account: ProviderAccount, job: Job) -> SendResult:
        self.entered.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return SendResult(None, 200)


async def _webhook_job(services: Services) -> tuple[str, str]:
    tenant, _ = await services.tenants.create("t", Plan.STARTUP)
    accepted = await services.jobs.accept(
        NewJob(
            tenant_id=tenant.id,
            channel=Channel.WEBHOOK,
            queue=Queue.WEBHOOK,
            priority=Priority.NORMAL,
            payload={"url": "https://example.com/hook"},
        )
    )
    return tenant.id, accepted.job.id


@asynccontextmanager
async def _running(services: Services, sender: Held) -> AsyncIterator[Worker]:
    runner = PassRunner(sender, services.clock, {Channel.WEBHOOK: sender})
    dispatcher = Dispatcher(runner, services.retry_policy(), services.clock)
    config = WorkerConfig(
        queues=[Queue.WEBHOOK], concurrency=4, batch_size=4, lease_seconds=LEASE, poll_seconds=0.05
    )
    worker = Worker(config, services.queue, dispatcher, services.alerter, services.wakeup)
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop=stop))
    try:
        await asyncio.wait_for(sender.entered.wait(), timeout=10)
        yield worker
    finally:
        stop.set()
        sender.release.set()
        await asyncio.wait_for(task, timeout=10)


async def _lease_end(services: Services, job_id: str) -> float:
    query = select(queue_entries.c.available_at).where(queue_entries.c.job_id == job_id)
    async with services.db.transaction() as conn:
        return float((await conn.execute(query)).scalar_one())


async def test_a_long_call_keeps_its_lease(services: Services, clock: ManualClock) -> None:
    tenant_id, job_id = await _webhook_job(services)
    sender = Held()
    async with _running(services, sender):
        for _ in range(3):
            clock.advance(LEASE * 2 / 3)

            async def renewed() -> bool:
                return await _lease_end(services, job_id) > clock.now() + LEASE / 2

            await eventually(renewed, timeout=10, what="the heartbeat to renew the lease")
            assert await claim(services.queue, Queue.WEBHOOK, 1, LEASE) == []
        sender.release.set()

        async def completed() -> bool:
            return (await services.jobs.get(tenant_id, job_id))[0].status is JobStatus.COMPLETED

        await eventually(completed, timeout=10, what="the held call to be recorded")
    assert not sender.cancelled


async def test_a_call_whose_claim_was_taken_is_stopped_and_writes_nothing(
    services: Services,
) -> None:
    tenant_id, job_id = await _webhook_job(services)
    sender = Held()
    async with _running(services, sender):
        # Another worker claims the job (as after a lease that ran out): a new token.
        async with services.db.transaction() as conn:
            await conn.execute(
                update(queue_entries)
                .where(queue_entries.c.job_id == job_id)
                .values(claim_token="another-worker")
            )

        async def stopped() -> bool:
            return sender.cancelled

        await eventually(stopped, timeout=10, what="the stale call to be stopped")
    job = (await services.jobs.get(tenant_id, job_id))[0]
    assert job.status is JobStatus.PROCESSING
    async with services.db.transaction() as conn:
        count = select(func.count()).select_from(attempts).where(attempts.c.job_id == job_id)
        assert (await conn.execute(count)).scalar_one() == 0
        token = select(queue_entries.c.claim_token).where(queue_entries.c.job_id == job_id)
        assert (await conn.execute(token)).scalar_one() == "another-worker"
