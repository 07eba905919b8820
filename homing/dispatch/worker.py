"""The worker loop: claim a batch, deliver concurrently, record outcomes in batches.

Three short transactions per job at most, none held across a provider call:
the claim, nothing during delivery, and the outcome (batched with others).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from homing.dispatch.alerts import Alerter, DeadLetterAlert
from homing.dispatch.dispatcher import Dispatcher
from homing.errors import StoreError
from homing.models import QUEUE_FOR_CHANNEL, Channel, ClaimedJob, ProviderAccount, Queue
from homing.queue.wakeup import Wakeup
from homing.store.providers import ProviderStore
from homing.store.queue import Outcome, QueueStore

log = logging.getLogger("homing.worker")


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    queues: Sequence[Queue]
    concurrency: int
    batch_size: int
    lease_seconds: float
    poll_seconds: float


class Worker:
    def __init__(
        self,
        config: WorkerConfig,
        queue_store: QueueStore,
        provider_store: ProviderStore,
        dispatcher: Dispatcher,
        alerter: Alerter,
        wakeup: Wakeup,
    ) -> None:
        self._config = config
        self._queue = queue_store
        self._providers = provider_store
        self._dispatcher = dispatcher
        self._alerter = alerter
        self._wakeup = wakeup
        self._inflight: set[asyncio.Task[None]] = set()
        self._outcomes: list[Outcome] = []
        self._recorded = asyncio.Event()
        self.processed = 0

    async def run(self, *, once: bool = False, stop: asyncio.Event | None = None) -> int:
        """Deliver until ``stop`` is set, or with ``once`` until nothing is claimable.

        Returns how many jobs this call processed.
        """
        start = self.processed
        stop = stop or asyncio.Event()
        while not stop.is_set():
            claimed = await self._claim_capacity()
            if len(self._outcomes) >= self._config.batch_size:
                await self._flush()
            if claimed:
                continue
            if not self._inflight:
                await self._flush()
                if once and not await self._has_claimable():
                    break
            await self._idle(stop)
        await self._drain()
        return self.processed - start

    async def _claim_capacity(self) -> int:
        capacity = self._config.concurrency - len(self._inflight)
        if capacity <= 0:
            return 0
        try:
            claimed = await self._claim(min(capacity, self._config.batch_size))
        except StoreError as exc:
            log.warning("claim failed", extra={"error": str(exc)})
            return 0
        if claimed:
            accounts = await self._providers.for_tenants({c.job.tenant_id for c in claimed})
            for job in claimed:
                task = asyncio.create_task(self._deliver(job, accounts.get(job.job.tenant_id, [])))
                self._inflight.add(task)
                task.add_done_callback(self._inflight.discard)
        return len(claimed)

    async def _claim(self, limit: int) -> list[ClaimedJob]:
        for queue in self._config.queues:
            claimed = await self._queue.claim(queue, limit, self._config.lease_seconds)
            if claimed:
                return claimed
        return []

    async def _has_claimable(self) -> bool:
        return bool(await self._claim_capacity())

    async def _deliver(self, claimed: ClaimedJob, accounts: list[ProviderAccount]) -> None:
        outcome = await self._dispatcher.process(claimed, accounts)
        self._outcomes.append(outcome)
        self.processed += 1
        self._recorded.set()

    async def _idle(self, stop: asyncio.Event) -> None:
        """Wait for a finished delivery, new work, or the poll interval."""
        if self._outcomes:
            await self._flush()
            return
        waiters: list[asyncio.Future[bool]] = [asyncio.ensure_future(stop.wait())]
        if self._inflight:
            self._recorded.clear()
            waiters.append(asyncio.ensure_future(self._recorded.wait()))
        else:
            waiters.append(asyncio.ensure_future(self._wakeup.wait(self._config.poll_seconds)))
        _done, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        for waiter in pending:
            waiter.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def _flush(self) -> None:
        batch, self._outcomes = self._outcomes, []
        if not batch:
            return
        for delay in (0.0, 0.2, 1.0, 5.0):
            await asyncio.sleep(delay)
            try:
                applied = await self._queue.apply(batch)
                break
            except StoreError as exc:
                log.warning("recording outcomes failed; retrying", extra={"error": str(exc)})
        else:
            # The leases will expire and the jobs be delivered again: at-least-once.
            log.error("outcomes not recorded", extra={"count": len(batch)})
            return
        for job_id, error_class, error in applied.dead_lettered:
            self._alerter.dead_letter(DeadLetterAlert(job_id, error_class, error))
        for job_id in applied.lost_leases:
            log.warning("lease lost before the outcome was recorded", extra={"job_id": job_id})

    async def _drain(self) -> None:
        if self._inflight:
            await asyncio.gather(*self._inflight, return_exceptions=True)
        await self._flush()


def queues_for(channels: Sequence[Channel]) -> list[Queue]:
    queues = [Queue.PLATFORM_EMAIL] if Channel.EMAIL in channels else []
    return queues + [QUEUE_FOR_CHANNEL[c] for c in channels]
