"""The worker loop: claim a batch, deliver concurrently, record outcomes in batches.

Three short transactions per job at most, none held across a provider call:
the claim, nothing during delivery, and the outcome (batched with others).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

from homing.alerts import Alerter, DeadLetterAlert
from homing.channels import Channel
from homing.clock import Heartbeat
from homing.dispatch.dispatcher import Dispatcher
from homing.dispatch.outcome_watch import Findings, OutcomeWatcher, findings
from homing.dispatch.policy import CALL_LIMIT
from homing.domain.queue import Applied, Completed, Failed, Outcome, Rescheduled
from homing.errors import StoreError
from homing.logs import job_context
from homing.metrics import DEAD_LETTERS, IN_FLIGHT, JOBS_FINISHED, THROTTLED_DEFERRALS, bounded
from homing.models import (
    EXPIRED,
    QUEUE_FOR_CHANNEL,
    ClaimedJob,
    FailureClass,
    ProviderAccount,
    Queue,
)
from homing.settings import WorkerSettings
from homing.store.claiming import Claim
from homing.store.queue import QueueStore
from homing.timing.wakeups import Wakeup

_DEFAULT = WorkerSettings()

log = logging.getLogger("homing.worker")

# How long a suspended tenant's claimed job is put back for; unsuspending releases
# held jobs at once (TenantStore.release_held).
SUSPENDED_HOLD_SECONDS = 3600.0

# The error_class label's values on homing_dead_letters_total (docs/architecture.md,
# "Failure classes", and the policy's own verdicts).
DEAD_LETTER_CLASSES = frozenset(
    {*(c.value for c in FailureClass), CALL_LIMIT, EXPIRED, "no_provider", "worker_lost"}
)


# Seconds between tries to record a group of outcomes while the database is away
# (the last one repeats until it is back).
RECORD_BACKOFF = (0.0, 0.2, 0.5, 1.0, 2.0, 5.0)

# The status label of homing_jobs_finished_total: the terminal statuses.
COMPLETED, FAILED, SUPPRESSED = "completed", "failed", "suppressed"


@dataclass(frozen=True, slots=True)
class _Held:
    """What the log lines and the metrics of a held job need: its tenant, pass,
    channel and queue."""

    tenant_id: str
    pass_number: int
    channel: str
    queue: str


@dataclass(frozen=True, slots=True)
class _Call:
    """A delivery in flight: the claim it runs under, and its task (to stop it)."""

    claim_token: str
    task: asyncio.Task[None]


@dataclass(kw_only=True, frozen=True, slots=True)
class WorkerConfig:
    """What a worker claims from and how much: queues, concurrency, claim batch size,
    lease, poll interval, and how long an outcome may wait to be written with others."""

    queues: Sequence[Queue]
    concurrency: int
    batch_size: int
    lease_seconds: float
    poll_seconds: float
    outcome_window: float = _DEFAULT.outcome_window_seconds


class Worker:
    """The worker loop: claims due entries in batches, runs each through the dispatcher
    under a renewed lease, records the outcome and waits for wake-ups when idle."""

    def __init__(
        self,
        config: WorkerConfig,
        queue_store: QueueStore,
        dispatcher: Dispatcher,
        alerter: Alerter,
        wakeup: Wakeup,
        *,
        heartbeat: Heartbeat | None = None,
        watcher: OutcomeWatcher | None = None,
    ) -> None:
        self._config = config
        self._watcher = watcher
        self._watching: set[asyncio.Task[None]] = set()
        self._beat = heartbeat or Heartbeat()
        self._queue = queue_store
        self._dispatcher = dispatcher
        self._alerter = alerter
        self._wakeup = wakeup
        self._inflight: set[asyncio.Task[None]] = set()
        self._calls: dict[str, _Call] = {}
        # job id -> what the log lines and metrics about a held job need.
        self._held: dict[str, _Held] = {}
        self._outcomes: list[Outcome] = []
        # The group of outcomes being written beside the loop, and its task (one at a time).
        self._writing: list[Outcome] = []
        self._writer: asyncio.Task[None] | None = None
        self._recorded = asyncio.Event()
        # How many groups of outcomes have been written: a claim that found nothing
        # while one was being written is tried again once it is (``run``).
        self._written = 0
        self._oldest_outcome = 0.0
        # While deliveries are in flight, claim only once this much room is free:
        # one claim per finished job would cost a transaction per job.
        self._min_claim = max(1, min(config.batch_size, config.concurrency // 4))
        self._turn = 0
        self.processed = 0
        # Set once the worker is asked to stop (or runs ``once``): only then may an
        # outcome go unwritten.
        self._stop = asyncio.Event()
        self._once = False

    async def run(self, *, once: bool = False, stop: asyncio.Event | None = None) -> int:
        """Deliver until ``stop`` is set, or with ``once`` until nothing is claimable.

        Returns how many jobs this call processed.
        """
        start = self.processed
        stop = self._stop = stop or asyncio.Event()
        self._once = once
        heartbeat = asyncio.create_task(self._heartbeat())
        try:
            while not stop.is_set():
                self._beat.beat()
                written = self._written
                claimed = await self._claim_capacity()
                if len(self._outcomes) >= self._config.batch_size:
                    self._flush_soon()
                if claimed:
                    continue
                if not self._inflight:
                    await self._flush()
                if self._written != written:
                    # A group was written since this claim began: its leases no longer
                    # count against the tenants' in-flight caps nor this worker's
                    # concurrency, so claim again now, not after the poll interval.
                    continue
                if not self._inflight and once and not await self._has_claimable():
                    break
                await self._idle(stop)
            await self._drain()
        finally:
            self._beat.stop()
            heartbeat.cancel()
            await asyncio.gather(heartbeat, return_exceptions=True)
        return self.processed - start

    async def _heartbeat(self) -> None:
        """Renew the leases this worker holds every third of a lease, for as long as
        it runs: a call may outlast a lease (a pass tries several providers, each up
        to the call deadline), and a lease that ran out would let another worker
        send the same job while this one still is."""
        while True:
            await asyncio.sleep(self._config.lease_seconds / 3)
            try:
                await self._renew()
            except Exception:  # the heartbeat must outlive any one failed tick
                log.exception("renewing leases failed unexpectedly")

    async def _renew(self) -> None:
        """One UPDATE for every held lease; a call whose claim is gone is stopped."""
        held = {o.job_id: o.claim_token for o in (*self._writing, *self._outcomes)}
        held.update({job_id: call.claim_token for job_id, call in self._calls.items()})
        if not held:
            return
        try:
            kept = await self._queue.renew(held, self._config.lease_seconds)
        except StoreError as exc:
            log.warning("renewing leases failed", extra={"error": str(exc)})
            return
        for job_id in held.keys() - kept:
            call = self._calls.get(job_id)
            if call is None or call.claim_token != held[job_id] or call.task.done():
                continue  # finished meanwhile, or recorded: the outcome write decides
            # Another worker holds the job now: finishing this send would be a stale one.
            with self._about(job_id):
                log.warning("claim lost during delivery; call stopped")
            call.task.cancel()
            self._recorded.set()

    async def _claim_capacity(self) -> int:
        # Outcomes not yet written still hold their leases: they count against the
        # concurrency, so a slow write cannot let leases pile up without bound.
        unwritten = len(self._outcomes) + len(self._writing)
        capacity = self._config.concurrency - len(self._inflight) - unwritten
        if capacity <= 0 or (self._inflight and capacity < self._min_claim):
            return 0
        try:
            # One transaction: the claim, the suppressed among its jobs ended, and the
            # accounts and suspensions starting them needs (homing.store.claiming).
            claim = await self._claim(min(capacity, self._config.batch_size))
        except StoreError as exc:
            log.warning("claim failed", extra={"error": str(exc)})
            return 0
        self._start(claim)
        return claim.size

    def _start(self, claim: Claim) -> None:
        self.processed += len(claim.suppressed)
        for gone in claim.suppressed:
            JOBS_FINISHED.labels(gone.job.channel.value, SUPPRESSED).inc()
        for job in claim.jobs:
            self._held[job.job.id] = _Held(
                job.job.tenant_id, job.pass_number, job.job.channel.value, job.job.queue.value
            )
            if job.job.tenant_id in claim.suspended:
                # A suspended tenant's jobs stay queued, untouched, until it is unsuspended.
                self._record(self._dispatcher.hold(job, SUSPENDED_HOLD_SECONDS))
                continue
            accounts = claim.accounts.get(job.job.tenant_id, [])
            task = asyncio.create_task(self._deliver(job, accounts))
            self._inflight.add(task)
            task.add_done_callback(self._inflight.discard)
            self._calls[job.job.id] = _Call(job.claim_token, task)
            task.add_done_callback(functools.partial(self._forget, job.job.id))

    def _forget(self, job_id: str, task: asyncio.Task[None]) -> None:
        call = self._calls.get(job_id)
        if call is not None and call.task is task:
            del self._calls[job_id]

    async def _claim(self, limit: int) -> Claim:
        self._turn += 1
        queues = claim_order(self._config.queues, self._turn)
        return await self._queue.claim_ready(queues, limit, self._config.lease_seconds)

    async def _has_claimable(self) -> bool:
        return bool(await self._claim_capacity())

    async def _deliver(self, claimed: ClaimedJob, accounts: list[ProviderAccount]) -> None:
        IN_FLIGHT.inc()
        try:
            outcome = await self._dispatcher.process(claimed, accounts)
        finally:
            IN_FLIGHT.dec()
        self._record(outcome)
        self.processed += 1
        self._recorded.set()

    def _record(self, outcome: Outcome) -> None:
        if not self._outcomes:
            self._oldest_outcome = time.monotonic()
        self._outcomes.append(outcome)

    def _flush_in(self) -> float | None:
        """Seconds until the pending outcomes are due to be written (None: none)."""
        if not self._outcomes or self._writer is not None:
            return None  # none, or the write under way wakes the loop when it ends
        if not self._inflight or len(self._outcomes) >= self._config.batch_size:
            return 0.0
        return max(0.0, self._oldest_outcome + self._config.outcome_window - time.monotonic())

    async def _idle(self, stop: asyncio.Event) -> None:
        """Wait for a finished delivery, new work, the poll interval, or a due flush."""
        due = self._flush_in()
        if due == 0.0:
            self._flush_soon()
            return
        timeout = self._config.poll_seconds if due is None else min(due, self._config.poll_seconds)
        waiters: list[asyncio.Future[bool]] = [
            asyncio.ensure_future(stop.wait()),
            asyncio.ensure_future(self._wakeup.wait(timeout)),
        ]
        if self._inflight or self._writer is not None:
            # New work may start while deliveries are in flight, if there is room;
            # a write that ends frees room and may let the next group go.
            self._recorded.clear()
            waiters.append(asyncio.ensure_future(self._recorded.wait()))
        _done, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        for waiter in pending:
            waiter.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def _flush_soon(self) -> None:
        """Write the pending outcomes as one group beside the loop, which goes on
        claiming meanwhile; while a group is being written the next one gathers, as
        accepts do (homing.store.accepting). A crash before a group commits loses
        nothing: its jobs' leases run out and they are claimed again, as ever."""
        if self._writer is not None or not self._outcomes:
            return
        batch, self._outcomes = self._outcomes, []
        self._writer = asyncio.create_task(self._write(batch))

    async def _flush(self) -> None:
        """Write every pending outcome, and wait until they are written."""
        if self._writer is not None:
            await asyncio.shield(self._writer)
        batch, self._outcomes = self._outcomes, []
        if batch:
            await self._write(batch)

    async def _write(self, batch: list[Outcome]) -> None:
        self._writing = batch
        applied: Applied | None = None
        try:
            applied = await self._apply(batch)
        finally:
            self._writing = []
            if self._writer is asyncio.current_task():
                self._writer = None
            if applied is not None:
                self._written += 1
            self._recorded.set()
        if applied is not None:
            self._applied(batch, applied)
        self._forget_held()
        if applied is not None:
            self._watch(batch)

    async def _apply(self, batch: list[Outcome]) -> Applied | None:
        """Record ``batch``, trying again with backoff for as long as the database is
        away: a success held here is a fact, and dropping it would let the leases run
        out and the jobs be sent again. The batch stays in ``_writing`` meanwhile, so
        the heartbeat keeps its leases and it counts against the concurrency (no new
        claims pile up behind it). Only a stopping (or ``once``) worker gives up, a
        lease after it began to; then the next claim tells the calls as unknown
        (homing.dispatch.unaccounted) and an at_most_once job is not sent again."""
        tries = 0
        given_up_at: float | None = None
        while True:
            await asyncio.sleep(RECORD_BACKOFF[min(tries, len(RECORD_BACKOFF) - 1)])
            tries += 1
            try:
                return await self._queue.apply(batch)
            except StoreError as exc:
                log.warning(
                    "recording outcomes failed; retrying",
                    extra={"error": str(exc), "count": len(batch), "tries": tries},
                )
            if self._once or self._stop.is_set():
                given_up_at = given_up_at or time.monotonic() + self._config.lease_seconds
                if time.monotonic() >= given_up_at:
                    log.error("outcomes not recorded", extra={"count": len(batch)})
                    return None

    def _applied(self, batch: list[Outcome], applied: Applied) -> None:
        self._count(batch, applied)
        for job_id, error_class, error in applied.dead_lettered:
            with self._about(job_id):
                held = self._held.get(job_id)
                tenant_id = None if held is None else held.tenant_id
                alert = DeadLetterAlert(job_id, error_class, error, tenant_id=tenant_id)
                self._alerter.dead_letter(alert)
        for job_id in applied.lost_leases:
            with self._about(job_id):
                log.warning("lease lost before the outcome was recorded")

    def _watch(self, batch: list[Outcome]) -> None:
        """Hand the batch's findings to the watcher, beside the loop (never awaited
        here: telling a tenant must not slow the next claim)."""
        found = findings(batch) if self._watcher is not None else None
        if not found or self._watcher is None:
            return
        task = asyncio.create_task(self._watched(self._watcher, found))
        self._watching.add(task)
        task.add_done_callback(self._watching.discard)

    @staticmethod
    async def _watched(watcher: OutcomeWatcher, found: Findings) -> None:
        try:
            await watcher.watch(found.rejected_credentials, found.gone_endpoints)
        except Exception:  # a notice must never stop the worker
            log.exception("watching outcomes failed")

    def _count(self, batch: Sequence[Outcome], applied: Applied) -> None:
        """The recorded outcomes in the metrics: finished jobs, dead letters and
        throttled deferrals (an outcome whose lease was lost recorded nothing)."""
        lost = set(applied.lost_leases)
        for outcome in batch:
            held = self._held.get(outcome.job_id)
            if held is None or outcome.job_id in lost:
                continue
            if isinstance(outcome, Completed):
                JOBS_FINISHED.labels(held.channel, COMPLETED).inc()
            elif isinstance(outcome, Failed):
                JOBS_FINISHED.labels(held.channel, FAILED).inc()
                error_class = bounded(outcome.error_class, DEAD_LETTER_CLASSES)
                DEAD_LETTERS.labels(held.queue, error_class).inc()
            elif isinstance(outcome, Rescheduled) and outcome.refund and outcome.deferred_seconds:
                THROTTLED_DEFERRALS.labels(held.channel).inc()

    def _forget_held(self) -> None:
        """Keep the tenant and pass of jobs still in flight or waiting to be recorded
        only (a call that ended without an outcome is dropped here too)."""
        live = self._calls.keys() | {o.job_id for o in (*self._writing, *self._outcomes)}
        self._held = {job_id: about for job_id, about in self._held.items() if job_id in live}

    def _about(self, job_id: str) -> AbstractContextManager[None]:
        """Log lines inside carry the job's id, tenant and pass (as a delivery's do)."""
        held = self._held.get(job_id)
        if held is None:
            return job_context(job_id, None, None)
        return job_context(job_id, held.tenant_id, held.pass_number)

    async def _drain(self) -> None:
        if self._inflight:
            await asyncio.gather(*self._inflight, return_exceptions=True)
        await self._flush()
        if self._watching:
            await asyncio.gather(*self._watching, return_exceptions=True)


def claim_order(queues: Sequence[Queue], turn: int) -> list[Queue]:
    """The order to try ``queues`` in on claim round ``turn``: platform email always
    first (it is critical), the others taking turns at going first, so that a backlog
    in one channel cannot starve another (a worker serves email and webhooks)."""
    first: list[Queue] = [q for q in queues if q is Queue.PLATFORM_EMAIL]
    rest = [q for q in queues if q is not Queue.PLATFORM_EMAIL]
    if not rest:
        return first
    start = turn % len(rest)
    return first + rest[start:] + rest[:start]


def queues_for(channels: Sequence[Channel]) -> list[Queue]:
    queues = [Queue.PLATFORM_EMAIL] if Channel.EMAIL in channels else []
    return queues + [QUEUE_FOR_CHANNEL[c] for c in channels]
