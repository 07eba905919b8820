"""The SQL of multi-channel notifications (docs/notifications.md).

A notification is a row and its steps, one per channel in the order given. Every move
is one transaction, conditional on the status it was decided from, so two processes
(or a process restarted after a crash) never move a step twice: creating the
notification stores it, its steps and the jobs made at once (every step for ``all``,
the first that can go for ``first`` and ``escalate``); settling a step records its
outcome and makes the next step in the same transaction. A pending step keeps the job
it will make (``spec``: rendered and addressed at accept); making it claims the step
(``pending`` to ``queued``) before the job is stored, so a second maker finds it taken.
The jobs are accepted as single sends are (``accept_together``: preferences, caps,
suppression, quota), and an in-app step as the feed stores one (``write_item``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.domain.accepting import Accepted
from homing.domain.notification_rows import Notification
from homing.domain.notification_search import NotificationFilter
from homing.errors import HomingError
from homing.models import JobStatus, new_id
from homing.store import flow_rules as rules
from homing.store.accepting import (
    Accept,
    AcceptCheck,
    TraceReader,
    accept_together,
    traced,
    untraced,
)
from homing.store.database import Database
from homing.store.digests import mark_sent
from homing.store.feed import write_item
from homing.store.notification_rows import StepPlan, plan_of, prior_notification, read, step_row
from homing.store.notification_search import NotificationPage, of_job, search
from homing.store.tables.notifications import notification_steps, notifications

__all__ = ["Moves", "NewNotification", "NotificationStore"]

_steps = notification_steps.c
_notes = notifications.c


@dataclass(kw_only=True, frozen=True, slots=True)
class NewNotification:
    """A validated notification: its steps addressed and rendered, in order."""

    tenant_id: str
    strategy: str
    recipient: str
    template: str
    category: str | None
    escalate_after_seconds: int | None
    idempotency_key: str | None
    request_hash: str
    steps: tuple[StepPlan, ...]


@dataclass(slots=True)
class Moves:
    """What one transaction did, for after its commit: the steps given an outcome
    (channel, outcome), the jobs made, whether one was queued for a worker, and the
    feeds (tenant, recipient row id) that got an item."""

    outcomes: list[tuple[str, str]] = field(default_factory=list)
    # The jobs made, as single sends' accepts are counted.
    accepted: list[Accepted] = field(default_factory=list)
    queued: bool = False
    feeds: list[tuple[str, str]] = field(default_factory=list)


class NotificationStore:
    """Notifications and their steps, by tenant (every read names it)."""

    def __init__(
        self, db: Database, clock: Clock, feed_cap: int, *, trace: TraceReader = untraced
    ) -> None:
        """``trace``: what a step's new job's traceparent is read from (homing.tracing):
        the request's span for the first steps; a later step's, made by a worker,
        starts a trace of its own."""
        self._db = db
        self._clock = clock
        self._feed_cap = feed_cap
        self._trace = trace

    async def create(self, new: NewNotification) -> tuple[Notification, bool, Moves]:
        """Store the notification and make its first jobs; or the one an earlier request
        with the same Idempotency-Key stored (replayed: True), IdempotencyConflict when
        that request was another."""
        try:
            async with self._db.transaction() as conn:
                prior = await self._prior(conn, new)
                if prior is not None:
                    return prior, True, Moves()
                moves = Moves()
                notification_id = await self._insert(conn, new, moves, new_id())
                await self._follow(conn, notification_id, moves)
                return await read(conn, new.tenant_id, notification_id), False, moves
        except IntegrityError:
            async with self._db.transaction() as conn:
                prior = await self._prior(conn, new)
            if prior is None:
                raise
            return prior, True, Moves()

    async def send_digest(
        self, new: NewNotification, digest_id: str, count: int
    ) -> tuple[Notification, Moves] | None:
        """Store the notification a digest is sent as and make its first jobs, in the
        transaction that marks the digest sent (only while it is open with ``count``
        items): None, with nothing stored, when another sweep sent it first or an item
        joined it meanwhile (docs/notifications.md, "Digests")."""
        async with self._db.transaction() as conn:
            notification_id = new_id()
            if not await mark_sent(conn, digest_id, count, notification_id, self._clock.now()):
                return None
            moves = Moves()
            await self._insert(conn, new, moves, notification_id)
            await self._follow(conn, notification_id, moves)
            return await read(conn, new.tenant_id, notification_id), moves

    async def check_now(self, check: AcceptCheck) -> None:
        """Apply an accept rule in a transaction of its own (its HomingError raised)."""
        async with self._db.transaction() as conn:
            check.apply(await check.load(conn))

    async def get(self, tenant_id: str, notification_id: str) -> Notification:
        """The tenant's notification of this id and its steps; NotFound otherwise."""
        async with self._db.transaction() as conn:
            return await read(conn, tenant_id, notification_id)

    async def page(
        self, found: NotificationFilter, limit: int, cursor: str | None
    ) -> NotificationPage:
        """One page of the tenant's notifications, newest first (the console's list)."""
        async with self._db.transaction() as conn:
            return await search(conn, found, limit, cursor)

    async def of_job(self, tenant_id: str, job_id: str) -> tuple[Notification, int] | None:
        """The tenant's notification ``job_id`` is a step of and the step's position;
        None for a job that is no notification's step."""
        async with self._db.transaction() as conn:
            return await of_job(conn, tenant_id, job_id)

    async def settle(
        self, notification_id: str, position: int, was: str, verdict: rules.Verdict
    ) -> Moves:
        """Give a step its outcome (only if it is still ``was``) and make what follows,
        in one transaction. Nothing when another process moved the step first."""
        moves = Moves()
        async with self._db.transaction() as conn:
            # The notification's row first, then its steps: settles of two steps of one
            # notification take turns, so the second sees the first's outcome and
            # the notification cannot be left running with every step decided.
            await _locked(conn, notification_id)
            if await self._outcome(conn, notification_id, position, was, verdict, moves):
                await self._follow(conn, notification_id, moves)
        return moves

    async def record_signal(self, notification_id: str, position: int, signal: str) -> None:
        """Keep a success signal that came after its step was escalated (not undone)."""
        now = as_datetime(self._clock.now())
        async with self._db.transaction() as conn:
            await conn.execute(
                update(notification_steps)
                .where(_key(notification_id, position), _steps.signal.is_(None))
                .values(signal=signal, signal_at=now, updated_at=now)
            )

    async def _prior(self, conn: AsyncConnection, new: NewNotification) -> Notification | None:
        return await prior_notification(conn, new.tenant_id, new.idempotency_key, new.request_hash)

    async def _insert(
        self, conn: AsyncConnection, new: NewNotification, moves: Moves, notification_id: str
    ) -> str:
        now = as_datetime(self._clock.now())
        await conn.execute(
            notifications.insert(),
            {
                "id": notification_id,
                "tenant_id": new.tenant_id,
                "strategy": new.strategy,
                "status": rules.RUNNING,
                "escalate_after_seconds": new.escalate_after_seconds,
                "recipient": new.recipient,
                "template": new.template,
                "category": new.category,
                "idempotency_key": new.idempotency_key,
                "request_hash": new.request_hash,
                "created_at": now,
                "updated_at": now,
                "completed_at": None,
            },
        )
        rows = [step_row(notification_id, i, plan, now) for i, plan in enumerate(new.steps)]
        await conn.execute(notification_steps.insert(), rows)
        moves.outcomes += [(p.channel.value, rules.SKIPPED) for p in new.steps if p.reason]
        if new.strategy == "all":
            for i, plan in enumerate(new.steps):
                if plan.reason is None:
                    await self._make(conn, notification_id, i, plan, moves)
        return notification_id

    async def _follow(self, conn: AsyncConnection, notification_id: str, moves: Moves) -> None:
        """Make the next step while the notification runs and none waits; end it when
        its steps say so. A step whose job is decided as it is made (suppressed, an
        in-app item, a refusal) is settled here and the loop goes on."""
        while True:
            note = await _locked(conn, notification_id)
            if note.status != rules.RUNNING:
                return
            steps = (
                await conn.execute(
                    select(notification_steps)
                    .where(_steps.notification_id == notification_id)
                    .order_by(_steps.position)
                )
            ).all()
            statuses = [s.status for s in steps]
            ending = rules.overall(note.strategy, statuses)
            if ending is not None:
                await self._end(conn, note, steps, ending, moves)
                return
            if rules.QUEUED in statuses or note.strategy == "all":
                return
            step = next(s for s in steps if s.status == rules.PENDING)
            await self._make(conn, notification_id, step.position, plan_of(step), moves)

    async def _make(
        self,
        conn: AsyncConnection,
        notification_id: str,
        position: int,
        plan: StepPlan,
        moves: Moves,
    ) -> None:
        """Claim a pending step, store its job and settle it at once when its job is
        decided already (the strategy's rules)."""
        epoch = self._clock.now()
        now = as_datetime(epoch)
        claimed = await conn.execute(
            update(notification_steps)
            .where(_key(notification_id, position), _steps.status == rules.PENDING)
            .values(status=rules.QUEUED, spec=None, updated_at=now)
        )
        if claimed.rowcount != 1:
            return  # another process made it
        note = (await conn.execute(select(notifications).where(_notes.id == notification_id))).one()
        accepted = await self._accept(conn, plan, epoch)
        if isinstance(accepted, HomingError):
            refused = rules.Verdict(rules.FAILED, accepted.code)
            await self._outcome(conn, notification_id, position, rules.QUEUED, refused, moves)
            return
        moves.accepted.append(accepted)
        job = accepted.job
        after = note.escalate_after_seconds if note.strategy == "escalate" else None
        await conn.execute(
            update(notification_steps)
            .where(_key(notification_id, position))
            .values(
                job_id=job.id,
                item_id=job.payload.get("item_id"),
                due_at=None if after is None else epoch + after,
            )
        )
        if job.status is JobStatus.PENDING:
            moves.queued = True
        elif plan.content is not None and job.status is JobStatus.COMPLETED:
            moves.feeds.append((job.tenant_id, plan.content.recipient_id))
        verdict = rules.decide(
            note.strategy, plan.channel.value, job.status.value, job.error_class, None, False, False
        )
        if verdict is not None:
            await self._outcome(conn, notification_id, position, rules.QUEUED, verdict, moves)

    async def _accept(
        self, conn: AsyncConnection, plan: StepPlan, epoch: float
    ) -> Accepted | HomingError:
        """The step's job, stored as its channel's single sends are; a refusal (a quota,
        the sending-domain rule) returned, with nothing of the job stored."""
        assert plan.new is not None
        postgres = not self._db.is_sqlite
        if plan.content is not None:
            try:
                return await write_item(
                    conn, plan.new, plan.content, plan.quotas, self._feed_cap, epoch, postgres
                )
            except HomingError as refused:
                return refused
        accept = Accept(traced(plan.new, self._trace), plan.quotas, plan.check)
        [outcome] = await accept_together(conn, [accept], epoch, postgres)
        if isinstance(outcome, Accepted | HomingError):
            return outcome
        return HomingError("the job could not be accepted")  # no group: not reached

    async def _outcome(
        self,
        conn: AsyncConnection,
        notification_id: str,
        position: int,
        was: str,
        verdict: rules.Verdict,
        moves: Moves,
    ) -> bool:
        now = as_datetime(self._clock.now())
        values: dict[str, Any] = {
            "status": verdict.outcome,
            "reason": verdict.reason,
            "updated_at": now,
        }
        if verdict.reason in rules.SUCCESS_SIGNALS:
            values.update(signal=verdict.reason, signal_at=now)
        if was == rules.PENDING:
            # A step never made (not needed) keeps nothing of the job it would have made:
            # its address and content are the person's (docs/recipients.md, "Erasure").
            values["spec"] = None
        changed = await conn.execute(
            update(notification_steps)
            .where(_key(notification_id, position), _steps.status == was)
            .values(values)
            .returning(_steps.channel)
        )
        channel = changed.scalar_one_or_none()
        if channel is None:
            return False
        moves.outcomes.append((channel, verdict.outcome))
        return True

    async def _end(
        self, conn: AsyncConnection, note: Any, steps: Sequence[Any], ending: str, moves: Moves
    ) -> None:
        now = as_datetime(self._clock.now())
        for step in steps:
            if step.status == rules.PENDING:
                verdict = rules.Verdict(rules.NOT_NEEDED, "an earlier step succeeded")
                await self._outcome(conn, note.id, step.position, rules.PENDING, verdict, moves)
        await conn.execute(
            update(notifications)
            .where(_notes.id == note.id, _notes.status == rules.RUNNING)
            .values(status=ending, updated_at=now, completed_at=now)
        )


async def _locked(conn: AsyncConnection, notification_id: str) -> Any:
    """The notification's row, locked until the transaction ends (PostgreSQL; SQLite
    writes one transaction at a time)."""
    query = select(notifications).where(_notes.id == notification_id).with_for_update()
    return (await conn.execute(query)).one()


def _key(notification_id: str, position: int) -> Any:
    return and_(_steps.notification_id == notification_id, _steps.position == position)
