"""What the notification sweep reads (docs/notifications.md, "Durability"): the steps
still watched, a page at a time in key order, with their job's status; and the
signals their jobs were reported with (provider events, feed marks).

Watched: a ``queued`` step (its outcome not known), and an ``escalated`` one with no
signal yet while its notification runs (a late success is recorded, not undone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import and_, exists, func, or_, select

from homing.store import flow_rules as rules
from homing.store.database import Database
from homing.store.sql import one_of
from homing.store.tables.core import jobs
from homing.store.tables.feed import feed_items
from homing.store.tables.inbound import inbound_events
from homing.store.tables.notifications import notification_steps, notifications

__all__ = ["NotificationWatch", "Watched"]

_s = notification_steps.c
_n = notifications.c
_later = notification_steps.alias("later")


@dataclass(kw_only=True, frozen=True, slots=True)
class Watched:
    """A step the sweep looks at, with what decides it."""

    notification_id: str
    position: int
    channel: str
    status: str
    strategy: str
    job_id: str | None
    item_id: str | None
    due_at: float | None
    job_status: str | None
    error_class: str | None
    # No pending step follows it.
    last: bool

    @property
    def key(self) -> tuple[str, int]:
        return (self.notification_id, self.position)


class NotificationWatch:
    """The sweep's reads; it writes through ``NotificationStore``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def page(self, after: tuple[str, int] | None, limit: int) -> list[Watched]:
        """Up to ``limit`` watched steps after the key ``after``, in key order."""
        more = exists().where(
            _later.c.notification_id == _s.notification_id,
            _later.c.position > _s.position,
            _later.c.status == rules.PENDING,
        )
        query = (
            select(
                _s.notification_id,
                _s.position,
                _s.channel,
                _s.status,
                _s.job_id,
                _s.item_id,
                _s.due_at,
                _n.strategy,
                jobs.c.status.label("job_status"),
                jobs.c.error_class,
                more.label("more"),
            )
            .select_from(
                notification_steps.join(notifications, _n.id == _s.notification_id).outerjoin(
                    jobs, jobs.c.id == _s.job_id
                )
            )
            .where(
                _s.status.in_([rules.QUEUED, rules.ESCALATED]),
                or_(
                    _s.status == rules.QUEUED,
                    and_(_s.signal.is_(None), _n.status == rules.RUNNING),
                ),
            )
            .order_by(_s.notification_id, _s.position)
            .limit(limit)
        )
        if after is not None:
            nid, position = after
            query = query.where(
                or_(
                    _s.notification_id > nid,
                    and_(_s.notification_id == nid, _s.position > position),
                )
            )
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [
            Watched(
                notification_id=r.notification_id,
                position=r.position,
                channel=r.channel,
                status=r.status,
                strategy=r.strategy,
                job_id=r.job_id,
                item_id=r.item_id,
                due_at=r.due_at,
                job_status=r.job_status,
                error_class=r.error_class,
                last=not r.more,
            )
            for r in rows
        ]

    async def signals(self, watched: Sequence[Watched]) -> dict[tuple[str, int], str]:
        """The signal each step's job has, by step key: a success signal (delivered,
        opened, clicked; an in-app item seen or read) before a failure (bounced,
        failed). Two queries at most, whatever the number of steps."""
        by_job = {w.job_id: w.key for w in watched if w.job_id and w.item_id is None}
        by_item = {w.item_id: w.key for w in watched if w.item_id}
        found: dict[tuple[str, int], str] = {}
        wanted = [*rules.SUCCESS_SIGNALS, *rules.FAILURE_SIGNALS]
        async with self._db.transaction() as conn:
            if by_job:
                e = inbound_events.c
                query = (
                    select(e.job_id, e.event_type, func.count())
                    .where(one_of(conn, e.job_id, set(by_job)), e.event_type.in_(wanted))
                    .group_by(e.job_id, e.event_type)
                )
                for job_id, event_type, _ in (await conn.execute(query)).all():
                    key = by_job[job_id]
                    if found.get(key) not in rules.SUCCESS_SIGNALS:
                        found[key] = event_type
            if by_item:
                f = feed_items.c
                query = select(f.id, f.seen_at, f.read_at).where(one_of(conn, f.id, set(by_item)))
                for item_id, seen_at, read_at in (await conn.execute(query)).all():
                    if read_at is not None or seen_at is not None:
                        found[by_item[item_id]] = "read" if read_at is not None else "seen"
        return found
