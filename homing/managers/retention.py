"""Retention: how long finished jobs and their payloads are kept, and the purge.

Finished jobs (COMPLETED, FAILED, SUPPRESSED, CANCELLED, with no queue entry) are deleted
``retention_days`` after they finished, with their attempts, dead letters and the
inbound events matched to them. Earlier, after ``payload_retention_days``, their
payloads lose what the tenant's recipients wrote or will read — subject, text, html,
a webhook's body — and their sealed headers; the rest (recipient, sender, URL, event
type, status, attempts, idempotency key and request hash) stays, so an idempotent
replay still answers the original job. Invitations that ended (accepted, revoked or
expired) go ``invitation_days`` after they ended; pending ones stay. Inbound signature
nonces (one-time tokens, ``Nonce``) go once their signature's window has passed. A purge
runs in small batches, one short transaction each, yielding between them, so it never
stalls claiming.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from prometheus_client import Counter

from homing.clock import Clock, as_datetime
from homing.managers.periodic import repeat
from homing.settings import RetentionSettings
from homing.store.audit import AuditStore
from homing.store.retention import RetentionStore

_DEFAULT = RetentionSettings()

log = logging.getLogger("homing.retention")

PURGED = Counter(
    "homing_retention_purged_total",
    "Rows retention removed: finished jobs deleted (jobs), payloads scrubbed (payloads),"
    " audit events deleted (audit_events), ended invitations deleted (invitations),"
    " expired signature nonces deleted (nonces).",
    ["kind"],
)

# What replaces a scrubbed body; a reader can tell it from any real one.
SCRUBBED = "[removed by retention]"
# The payload fields that carry content: email's subject, bodies and extra header fields
# (an unsubscribe link names its recipient), a webhook's body.
_CONTENT_FIELDS = frozenset({"subject", "text", "html", "headers", "body", "payload"})
_SEALED_FIELDS = frozenset({"headers_sealed"})
_DAY = 86_400.0

# One batch of a purge: rows done, or None when another worker holds the lock.
_Batch = Callable[[], Awaitable[int | None]]


def scrub_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with every content field that has a value replaced by ``SCRUBBED``
    and the sealed headers removed; every other field kept as it is."""
    return {
        key: SCRUBBED if key in _CONTENT_FIELDS and value is not None else value
        for key, value in payload.items()
        if key not in _SEALED_FIELDS
    }


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """Days to keep finished jobs and their payloads (0: for ever), and the batch size."""

    days: int
    payload_days: int
    batch_size: int = _DEFAULT.batch_size
    # Audit events (docs/architecture.md, "The audit log"): kept far longer than jobs.
    audit_days: int = _DEFAULT.audit_days
    # Ended invitations (docs/operations.md "Retention"): their email and role, nothing to keep.
    invitation_days: int = _DEFAULT.invitation_days


@dataclass(kw_only=True, frozen=True, slots=True)
class PurgeReport:
    """What one purge removed (or, in a dry run, would remove). ``locked``: another
    worker was purging, so this run stopped where it was."""

    jobs: int
    payloads: int
    dry_run: bool = False
    locked: bool = False
    audit_events: int = 0
    invitations: int = 0
    nonces: int = 0
    # Inbound events that matched no job, and conflicting repeats, past the jobs' age.
    inbound_events: int = 0
    # Notifications that ended (with their steps) past the jobs' age.
    notifications: int = 0
    # Digests sent or failed (with their items and gathered notifications), past it too.
    digests: int = 0


class Retention:
    """Runs the purge under a policy: once (``run``, the ``homing purge`` command) or
    every interval until stopped (``run_periodically``, in the worker process)."""

    def __init__(
        self,
        store: RetentionStore,
        clock: Clock,
        policy: RetentionPolicy,
        progress: Callable[[str], None] | None = None,
        audit: AuditStore | None = None,
    ) -> None:
        """``audit``: the audit log, purged under ``policy.audit_days`` (not at all
        when None)."""
        self._store = store
        self._audit = audit
        self._clock = clock
        self._policy = policy
        self._progress = progress or (lambda _message: None)
        # Set when the process stops: a periodic purge ends after its current batch.
        self._stopping = asyncio.Event()

    def _cutoff(self, days: int) -> datetime | None:
        return as_datetime(self._clock.now() - days * _DAY) if days > 0 else None

    async def run(self, *, dry_run: bool = False) -> PurgeReport:
        """One full purge now: old jobs first (no use scrubbing what goes), then payloads."""
        jobs_before = self._cutoff(self._policy.days)
        payloads_before = self._cutoff(self._policy.payload_days)
        if dry_run:
            return await self._count(jobs_before, payloads_before)
        deleted, locked = 0, False
        if jobs_before is not None:
            deleted, locked = await self._batches("jobs", self._purge_batch(jobs_before))
        inbound = 0
        if jobs_before is not None and not locked:
            inbound, locked = await self._batches(
                "inbound_events",
                lambda: self._store.purge_inbound(jobs_before, self._policy.batch_size),
            )
        ended = 0
        if jobs_before is not None and not locked:
            ended, locked = await self._batches(
                "notifications",
                lambda: self._store.purge_notifications(jobs_before, self._policy.batch_size),
            )
        gathered = 0
        if jobs_before is not None and not locked:
            gathered, locked = await self._batches(
                "digests",
                lambda: self._store.purge_digests(jobs_before, self._policy.batch_size),
            )
        scrubbed = 0
        if payloads_before is not None and not locked:
            scrubbed, locked = await self._batches("payloads", self._scrub_batch(payloads_before))
        invited = 0
        invitations_before = self._cutoff(self._policy.invitation_days)
        if invitations_before is not None and not locked:
            invited, locked = await self._batches(
                "invitations", self._invitation_batch(invitations_before)
            )
        nonces = 0
        if not locked:
            nonces, locked = await self._batches("nonces", self._nonce_batch())
        audited = 0
        audit_before = self._cutoff(self._policy.audit_days)
        if self._audit is not None and audit_before is not None and not locked:
            audited, _ = await self._batches("audit_events", self._audit_batch(audit_before))
        return PurgeReport(
            jobs=deleted,
            payloads=scrubbed,
            locked=locked,
            audit_events=audited,
            invitations=invited,
            nonces=nonces,
            inbound_events=inbound,
            notifications=ended,
            digests=gathered,
        )

    async def _count(
        self, jobs_before: datetime | None, payloads_before: datetime | None
    ) -> PurgeReport:
        jobs = await self._store.count_jobs(jobs_before) if jobs_before else 0
        inbound = await self._store.count_inbound(jobs_before) if jobs_before else 0
        ended = await self._store.count_notifications(jobs_before) if jobs_before else 0
        gathered = await self._store.count_digests(jobs_before) if jobs_before else 0
        payloads = 0
        if payloads_before is not None:
            not_before = jobs_before or as_datetime(0)
            payloads = await self._store.count_payloads(payloads_before, not_before)
        audited = 0
        audit_before = self._cutoff(self._policy.audit_days)
        if self._audit is not None and audit_before is not None:
            audited = await self._audit.count_before(audit_before)
        invitations_before = self._cutoff(self._policy.invitation_days)
        invited = (
            await self._store.count_invitations(invitations_before) if invitations_before else 0
        )
        return PurgeReport(
            jobs=jobs,
            payloads=payloads,
            dry_run=True,
            audit_events=audited,
            invitations=invited,
            inbound_events=inbound,
            notifications=ended,
            digests=gathered,
        )

    def _purge_batch(self, before: datetime) -> _Batch:
        return lambda: self._store.purge_jobs(before, self._policy.batch_size)

    def _invitation_batch(self, before: datetime) -> _Batch:
        return lambda: self._store.purge_invitations(before, self._policy.batch_size)

    def _nonce_batch(self) -> _Batch:
        def batch() -> Awaitable[int | None]:
            now = as_datetime(self._clock.now())
            return self._store.purge_nonces(now, self._policy.batch_size)

        return batch

    def _audit_batch(self, before: datetime) -> _Batch:
        audit = self._audit
        assert audit is not None
        return lambda: audit.purge_before(before, self._policy.batch_size)

    def _scrub_batch(self, before: datetime) -> _Batch:
        def batch() -> Awaitable[int | None]:
            now = as_datetime(self._clock.now())
            return self._store.scrub_payloads(before, self._policy.batch_size, scrub_payload, now)

        return batch

    async def _batches(self, kind: str, batch: _Batch) -> tuple[int, bool]:
        """Run ``batch`` until one comes back short; (rows done, whether locked out)."""
        total = 0
        while True:
            done = await batch()
            if done is None:
                self._progress(f"{kind}: another worker is purging; stopped")
                return total, True
            total += done
            PURGED.labels(kind=kind).inc(done)
            if done:
                self._progress(f"{kind}: {total} so far")
            if done < self._policy.batch_size or self._stopping.is_set():
                return total, False
            # Let claims and accepts have the database between two batches.
            await asyncio.sleep(0)

    async def run_periodically(self, stop: asyncio.Event, interval_seconds: float) -> None:
        """Purge every ``interval_seconds`` until ``stop`` is set; a failed run is
        logged and the next one tries again."""
        self._stopping = stop
        await repeat(self._purge_and_say, stop, interval_seconds, log, "retention purge")

    async def _purge_and_say(self) -> None:
        report = await self.run()
        if report.jobs or report.payloads or report.audit_events or report.invitations:
            log.info(
                "retention purged",
                extra={
                    "jobs": report.jobs,
                    "payloads": report.payloads,
                    "audit_events": report.audit_events,
                    "invitations": report.invitations,
                },
            )
