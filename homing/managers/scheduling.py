"""When a job is due (docs/scheduling.md): a send's ``send_at``, bounded, and the
recipient's quiet hours, which may hold a send until its window ends.

``schedule`` is pure (the moment, the job, the tenant's default window): admission
calls it for every job that names a ``send_at`` or goes to a recipient with a time
zone, and nothing here runs for any other. A scheduled job is an ordinary queue entry
whose ``available_at`` is its ``send_at`` (``homing.store.accepting.entry_row``), so
the claim, which only takes entries with ``available_at <= now``, pays nothing for it
until it is due.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Final
from zoneinfo import ZoneInfoNotFoundError

from homing.clock import Clock, as_datetime
from homing.domain.accepting import NewJob
from homing.errors import SendAtTooFar
from homing.managers.quiet_hours import QuietWindow, quiet_until, window_of, zone
from homing.models import Job, Priority
from homing.store.schedules import REQUESTED, ScheduleStore

__all__ = [
    "MAX_AHEAD_SECONDS",
    "QUIET_HOURS",
    "REQUESTED",
    "Scheduler",
    "check_ahead",
    "needs_tenant_window",
    "schedule",
]

# How far ahead a job may be scheduled: a bound on how long the queue holds it.
MAX_AHEAD_DAYS: Final = 30
MAX_AHEAD_SECONDS: Final = MAX_AHEAD_DAYS * 86_400
# Why a job is due later than its acceptance (``Job.schedule_reason``).
QUIET_HOURS: Final = "quiet_hours"


def check_ahead(send_at: float, now: float) -> None:
    """SendAtTooFar when ``send_at`` is more than ``MAX_AHEAD_DAYS`` after ``now``."""
    if send_at > now + MAX_AHEAD_SECONDS:
        raise SendAtTooFar(
            f"send_at is more than {MAX_AHEAD_DAYS} days ahead",
            {"field": "send_at", "max_days": MAX_AHEAD_DAYS},
        )


def needs_tenant_window(new: NewJob) -> bool:
    """Whether ``schedule`` would read the tenant's default quiet hours for this job."""
    hold = new.hold
    return (
        hold is not None
        and window_of(hold.quiet_hours) is None
        and new.priority is not Priority.CRITICAL
        and new.ordering_key is None
    )


def schedule(new: NewJob, now: float, tenant_window: QuietWindow | None = None) -> NewJob:
    """The job with its ``send_at`` decided: the one it asked for (SendAtTooFar past
    the bound; one already past is ``now``), then held to the end of the recipient's
    quiet window when it would fall inside it. Not held: a CRITICAL job, a job with an
    ordering key (its turn decides), a recipient with no (or an unknown) time zone, a
    category and a tenant with no quiet hours. ``tenant_window``: the tenant's default."""
    if new.send_at is not None:
        check_ahead(new.send_at, now)
        new = replace(new, send_at=max(now, new.send_at), schedule_reason=REQUESTED)
    hold = new.hold
    if hold is None or new.priority is Priority.CRITICAL or new.ordering_key is not None:
        return new
    window = window_of(hold.quiet_hours) or tenant_window
    if window is None:
        return new
    try:
        tz = zone(hold.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return new  # a zone this system no longer knows: not held, rather than refused
    until = quiet_until(as_datetime(new.send_at or now), window, tz)
    if until is None:
        return new
    return replace(new, send_at=until.timestamp(), schedule_reason=QUIET_HOURS)


class Scheduler:
    """Reschedules jobs that wait (``PATCH /v1/jobs/{id}``) through ``ScheduleStore``."""

    def __init__(self, store: ScheduleStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def reschedule(
        self, tenant_id: str, job_id: str, send_at: datetime, *, test_only: bool = False
    ) -> Job:
        """Move a PENDING job no worker has claimed to ``send_at`` (bounded as at accept;
        a moment past is now); its ttl moves with it. NotFound for another tenant's
        job, NotReschedulable when it was claimed, ended or waits in an ordering key's
        line, SendAtTooFar past the bound."""
        now = self._clock.now()
        epoch = send_at.timestamp()
        check_ahead(epoch, now)
        return await self._store.reschedule(
            tenant_id, job_id, max(now, epoch), now, test_only=test_only
        )
