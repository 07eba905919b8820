"""The reconciler: checks the ledger invariant, mends what breaks it, and says so.

Every job is either terminal with no queue entry, or non-terminal with exactly one
(docs/reliability.md, "The ledger invariant"). Every write that moves a job keeps it so
in one transaction; the reconciler is the check that this held, and the repair when a
bug, a hand edit or a restore broke it. A pass walks the jobs of each live status and
then the queue entries, in batches (``homing.store.ledger``), yielding between them, so
a huge table never stalls claiming. What it found (before mending) is set on the
``homing_unaccounted_jobs`` gauge, which must read 0; anything found is logged and
alerted. It runs every ``HOMING_RECONCILE_INTERVAL_SECONDS`` in worker processes, one
process at a time, and on ``homing reconcile``. A periodic pass ends after its current
batch when the process stops: a walk of a million live jobs (scheduled ones are live)
takes longer than a shutdown may, so it is left for the next process, concluding
nothing (no gauge, no alert), as a pass locked out by another process does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from homing.alerts import Alerter
from homing.clock import Clock
from homing.managers.periodic import repeat
from homing.metrics import UNACCOUNTED_JOBS
from homing.models import JobStatus
from homing.settings import ReconcileSettings
from homing.store.ledger import LedgerStore

_DEFAULT = ReconcileSettings()

__all__ = ["ReconcilePolicy", "ReconcileReport", "Reconciler"]

log = logging.getLogger("homing.reconciler")


@dataclass(frozen=True, slots=True)
class ReconcilePolicy:
    """How old a lease must have run out to count as stale, and the batch size."""

    stale_lease_seconds: float
    batch_size: int = _DEFAULT.batch_size


@dataclass(kw_only=True, frozen=True, slots=True)
class ReconcileReport:
    """What one pass found, by kind, and how many it mended (0 in a dry run).
    ``locked``: another process was reconciling, so this pass stopped where it was;
    ``stopped``: this process was stopping, so the pass ended after a batch."""

    missing_entry: int = 0
    terminal_entry: int = 0
    stale_lease: int = 0
    mended: int = 0
    dry_run: bool = False
    locked: bool = False
    stopped: bool = False

    @property
    def unaccounted(self) -> int:
        return self.missing_entry + self.terminal_entry + self.stale_lease


class Reconciler:
    """Runs reconciler passes: once (``run``, the ``homing reconcile`` command) or every
    interval until stopped (``run_periodically``, in the worker process)."""

    def __init__(
        self,
        store: LedgerStore,
        clock: Clock,
        alerter: Alerter,
        policy: ReconcilePolicy,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._alerter = alerter
        self._policy = policy
        self._progress = progress or (lambda _message: None)
        # Set when the process stops: a periodic pass ends after its current batch.
        self._stopping = asyncio.Event()

    async def run(self, *, dry_run: bool = False) -> ReconcileReport:
        """One full pass now: check every live job and every entry, mend unless
        ``dry_run``; set the gauge and alert when anything was found."""
        missing, mended, locked = await self._jobs(mend=not dry_run)
        terminal = stale = 0
        if not locked and not self._stopping.is_set():
            terminal, stale, fixed, locked = await self._entries(mend=not dry_run)
            mended += fixed
        stopped = self._stopping.is_set()
        report = ReconcileReport(
            missing_entry=missing,
            terminal_entry=terminal,
            stale_lease=stale,
            mended=mended,
            dry_run=dry_run,
            locked=locked,
            stopped=stopped,
        )
        whole = not locked and not stopped
        if whole:
            UNACCOUNTED_JOBS.set(report.unaccounted)
        if report.unaccounted:
            self._alert(report)
        elif whole:
            # A clean pass resolves what an earlier one reported.
            self._alerter.unaccounted(_counts(report), 0)
        return report

    async def _jobs(self, *, mend: bool) -> tuple[int, int, bool]:
        """(found, mended, locked out) over the PENDING and PROCESSING jobs."""
        found = mended = 0
        for status in (JobStatus.PENDING, JobStatus.PROCESSING):
            after = ""
            while True:
                batch = await self._store.jobs_batch(
                    status, after, self._policy.batch_size, mend=mend
                )
                if batch is None:
                    self._progress("another process is reconciling; stopped")
                    return found, mended, True
                found += len(batch.missing)
                mended += batch.mended
                if self._stopping.is_set():
                    return found, mended, False
                if batch.last_id is None or batch.read < self._policy.batch_size:
                    break
                after = batch.last_id
                await asyncio.sleep(0)  # claims and accepts get the database between
        return found, mended, False

    async def _entries(self, *, mend: bool) -> tuple[int, int, int, bool]:
        """(terminal, stale, mended, locked out) over the queue entries."""
        terminal = stale = mended = 0
        stale_before = self._clock.now() - self._policy.stale_lease_seconds
        after = ""
        while True:
            batch = await self._store.entries_batch(
                after, self._policy.batch_size, stale_before, mend=mend
            )
            if batch is None:
                self._progress("another process is reconciling; stopped")
                return terminal, stale, mended, True
            terminal += len(batch.terminal)
            stale += len(batch.stale)
            mended += batch.deleted + batch.released
            if batch.last_id is None or batch.read < self._policy.batch_size:
                return terminal, stale, mended, False
            if self._stopping.is_set():
                return terminal, stale, mended, False
            after = batch.last_id
            await asyncio.sleep(0)

    def _alert(self, report: ReconcileReport) -> None:
        counts = _counts(report)
        log.warning(
            "ledger invariant broken",
            extra={**counts, "mended": report.mended, "dry_run": report.dry_run},
        )
        self._alerter.unaccounted(counts, report.mended)

    async def run_periodically(self, stop: asyncio.Event, interval_seconds: float) -> None:
        """A pass every ``interval_seconds`` until ``stop`` is set; a failed pass is
        logged and the next one tries again. Setting ``stop`` also ends a pass under
        way after its current batch."""
        self._stopping = stop
        await repeat(self.run, stop, interval_seconds, log, "reconciler pass")


def _counts(report: ReconcileReport) -> dict[str, int]:
    return {
        "missing_entry": report.missing_entry,
        "terminal_entry": report.terminal_entry,
        "stale_lease": report.stale_lease,
    }
