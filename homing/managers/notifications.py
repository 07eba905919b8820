"""Multi-channel notifications (docs/notifications.md): start one, read one, and the
sweep that moves their steps along.

``start`` applies the plan to each step's job as a single send's accept does
(``Admission.admitted``) and hands the notification to the store, which stores it and
its first jobs in one transaction. The sweep runs beside the worker every
``HOMING_NOTIFICATION_SWEEP_SECONDS``: it reads the watched steps a page at a time,
decides each from its job and signals (``homing.store.flow_rules.decide``) and settles
it, making the next step in the same transaction. Every move is conditional on the
status it was decided from, so several sweeps at once, or one after a crash, move a
step once: nothing is lost (the state is in the database, not in a process) and
nothing is doubled.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace

from homing.clock import Clock
from homing.domain.notification_rows import Notification
from homing.domain.notification_search import NotificationFilter
from homing.domain.tenants import Principal
from homing.managers.admission import Admission, count_accepted
from homing.managers.feed import Feed
from homing.managers.periodic import repeat
from homing.metrics import FEED_ITEMS, NOTIFICATION_STEPS, bounded
from homing.store import flow_rules as rules
from homing.store.notification_search import NotificationPage
from homing.store.notification_watch import NotificationWatch, Watched
from homing.store.notifications import Moves, NewNotification, NotificationStore

__all__ = ["Notifications"]

log = logging.getLogger("homing.notifications")

_CHANNELS = ("in_app", "chat", "sms", "email")


class Notifications:
    """Starts notifications, reads them, and sweeps their steps along."""

    def __init__(
        self,
        store: NotificationStore,
        watch: NotificationWatch,
        admission: Admission,
        feed: Feed,
        clock: Clock,
        wake: Callable[[], None],
        *,
        page_size: int = 500,
    ) -> None:
        self._store = store
        self._watch = watch
        self._admission = admission
        self._feed = feed
        self._clock = clock
        self._wake = wake
        self._page_size = page_size

    async def start(self, principal: Principal, new: NewNotification) -> tuple[Notification, bool]:
        """Store the notification and make its first jobs (all of them for ``all``);
        the stored one and True for a replayed Idempotency-Key. Each step's job is
        admitted under the tenant's plan as a single send's is; an email step's
        sending-domain rule is applied now, for the whole request (DomainNotVerified),
        since a step made later has no request to refuse."""
        note, replayed, moves = await self._store.create(await self._admitted(principal, new))
        self._after(moves)
        return note, replayed

    async def send_digest(
        self, principal: Principal, new: NewNotification, digest_id: str, count: int
    ) -> Notification | None:
        """Send a digest as ``new`` (admitted as ``start`` admits), in the transaction
        that marks it sent; None when another sweep sent it or it grew meanwhile
        (``homing.managers.digests``)."""
        done = await self._store.send_digest(await self._admitted(principal, new), digest_id, count)
        if done is None:
            return None
        note, moves = done
        self._after(moves)
        return note

    async def _admitted(self, principal: Principal, new: NewNotification) -> NewNotification:
        steps = []
        for plan in new.steps:
            if plan.new is None:
                steps.append(plan)
                continue
            if plan.check is not None:
                await self._store.check_now(plan.check)
            job, quotas = await self._admission.admitted(principal, plan.new)
            steps.append(replace(plan, new=job, quotas=quotas))
        return replace(new, steps=tuple(steps))

    async def get(self, tenant_id: str, notification_id: str) -> Notification:
        """The tenant's notification; NotFound otherwise (another tenant's too)."""
        return await self._store.get(tenant_id, notification_id)

    async def page(
        self, found: NotificationFilter, limit: int, cursor: str | None
    ) -> NotificationPage:
        """One page of the tenant's notifications, newest first, after ``cursor``."""
        return await self._store.page(found, limit, cursor)

    async def of_job(self, tenant_id: str, job_id: str) -> tuple[Notification, int] | None:
        """The tenant's notification ``job_id`` is a step of, and the step's position."""
        return await self._store.of_job(tenant_id, job_id)

    async def sweep(self) -> int:
        """One pass over every watched step; how many steps it settled."""
        settled = 0
        after: tuple[str, int] | None = None
        while True:
            page = await self._watch.page(after, self._page_size)
            if not page:
                return settled
            escalating = [w for w in page if w.strategy == "escalate"]
            signals = await self._watch.signals(escalating) if escalating else {}
            now = self._clock.now()
            for watched in page:
                settled += await self._look(watched, signals.get(watched.key), now)
            if len(page) < self._page_size:
                return settled
            after = page[-1].key

    async def settle(self, notification_id: str, position: int, verdict: rules.Verdict) -> int:
        """Give a queued step ``verdict`` and make what follows (what a sweep does for
        each step it decides); 1 when this call moved it, 0 when another did first."""
        moves = await self._store.settle(notification_id, position, rules.QUEUED, verdict)
        self._after(moves)
        return 1 if moves.outcomes else 0

    async def run_periodically(self, stop: asyncio.Event, interval_seconds: float) -> None:
        """A sweep every ``interval_seconds`` until ``stop`` is set."""
        await repeat(self.sweep, stop, interval_seconds, log, "notification sweep")

    async def _look(self, watched: Watched, signal: str | None, now: float) -> int:
        if watched.status == rules.ESCALATED:
            if signal in rules.SUCCESS_SIGNALS:
                assert signal is not None
                await self._store.record_signal(watched.notification_id, watched.position, signal)
            return 0
        due = watched.due_at is not None and now >= watched.due_at
        verdict = rules.decide(
            watched.strategy,
            watched.channel,
            watched.job_status,
            watched.error_class,
            signal,
            due,
            watched.last,
        )
        if verdict is None:
            return 0
        return await self.settle(watched.notification_id, watched.position, verdict)

    def _after(self, moves: Moves) -> None:
        """After the commit: count the jobs and outcomes, wake the workers and feeds."""
        for accepted in moves.accepted:
            count_accepted(accepted)
        for channel, outcome in moves.outcomes:
            NOTIFICATION_STEPS.labels(
                bounded(channel, _CHANNELS), bounded(outcome, rules.OUTCOMES)
            ).inc()
        if moves.queued:
            self._wake()
        for key in moves.feeds:
            FEED_ITEMS.labels("stored").inc()
            self._feed.streams.notify(key)
