"""The signals the operator's alerts watch, and which alerts are firing.

Each read is one grouped statement over a window on an indexed time column
(``attempts.started_at``, ``inbound_events.received_at``, ``dead_letters.created_at``,
``jobs.completed_at``), so its cost follows the window's rows, not the tables'.
``alerts_firing`` holds one row per condition firing now: starting is an insert that
only one process wins, stopping a delete that only one process wins, so however many
processes evaluate, each alert and each "resolved" is sent once. ``take_turn`` is a
lease on one row that lets one process evaluate per interval.

``alert_history`` keeps what fired lately for the operator's console: the insert that
starts a condition adds a row in its transaction, the delete that stops it sets that
row's ``resolved_at`` in its own, and the same transaction as a start drops the rows
beyond the newest ``history_rows`` (HOMING_ALERT_HISTORY_ROWS), so the table stays
bounded whatever runs and however many conditions fire.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, case, delete, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.models import AttemptOutcome, EntryStatus, new_id
from homing.store.database import Database
from homing.store.tables.core import alert_history, alerts_firing, attempts, dead_letters, jobs
from homing.store.tables.inbound import inbound_events

__all__ = ["AlertSignalStore", "Fired", "Firing", "InboundWindow", "ProviderCalls"]

# The evaluator's lease row in ``alerts_firing`` (a key no condition uses).
TURN_KEY = "_evaluator"
# Lags read for the inbound p95: the newest this many events of the window.
MAX_LAG_SAMPLE = 10_000
# A history row's detail: as long as an alert's (``homing.alerts.MAX_DETAIL``).
HISTORY_DETAIL = 500
_FAILED = (
    AttemptOutcome.TRANSIENT.value,
    AttemptOutcome.PROVIDER_PERMANENT.value,
    AttemptOutcome.UNCERTAIN.value,
)


@dataclass(frozen=True, slots=True)
class ProviderCalls:
    """One provider's calls in the window and how many of them failed."""

    provider: str
    calls: int
    failed: int


@dataclass(frozen=True, slots=True)
class Firing:
    """A condition firing now, since when, and the detail it was raised with."""

    key: str
    since: datetime
    detail: str


@dataclass(frozen=True, slots=True)
class Fired:
    """A condition that fired (row ``id`` of the history): when, with what detail, and
    when it resolved (None while it fires)."""

    id: str
    key: str
    detail: str
    fired_at: datetime
    resolved_at: datetime | None


@dataclass(frozen=True, slots=True)
class InboundWindow:
    """The window's inbound events: how many, how many quarantined, and the lags
    (received - occurred, seconds) of the newest of them that carry an occurred_at."""

    events: int
    quarantined: int
    lags: list[float]


class AlertSignalStore:
    """The SQL of the alerts' signals and of their firing state."""

    def __init__(self, db: Database, history_rows: int = 1000) -> None:
        self._db = db
        self._history_rows = history_rows

    async def provider_calls(self, since: datetime) -> list[ProviderCalls]:
        a = attempts.c
        failed = func.sum(case((a.outcome.in_(_FAILED), 1), else_=0))
        query = (
            select(a.provider, func.count(), failed)
            .where(a.started_at >= since, a.outcome != AttemptOutcome.SKIPPED.value)
            .group_by(a.provider)
            .order_by(a.provider)
        )
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [ProviderCalls(r[0], int(r[1]), int(r[2] or 0)) for r in rows]

    async def inbound(self, since: datetime) -> InboundWindow:
        e = inbound_events.c
        quarantined = func.sum(case((e.status == EntryStatus.QUARANTINED.value, 1), else_=0))
        counts = select(func.count(), quarantined).where(e.received_at >= since)
        lags = (
            select(e.received_at, e.occurred_at)
            .where(e.received_at >= since, e.occurred_at.is_not(None))
            .order_by(e.received_at.desc())
            .limit(MAX_LAG_SAMPLE)
        )
        async with self._db.transaction() as conn:
            total, held = (await conn.execute(counts)).one()
            rows = (await conn.execute(lags)).all()
        return InboundWindow(
            events=int(total),
            quarantined=int(held or 0),
            lags=[(r.received_at - r.occurred_at).total_seconds() for r in rows],
        )

    async def dead_letters_since(self, since: datetime) -> int:
        query = select(func.count()).where(dead_letters.c.created_at >= since)
        async with self._db.transaction() as conn:
            return int((await conn.execute(query)).scalar_one())

    async def last_finished_at(self) -> datetime | None:
        """When a job last finished (any tenant): the workers' progress."""
        async with self._db.transaction() as conn:
            value: datetime | None = (
                await conn.execute(select(func.max(jobs.c.completed_at)))
            ).scalar_one()
        return value

    async def firing(self) -> dict[str, str]:
        """The conditions firing now, with the detail each was raised with."""
        c = alerts_firing.c
        async with self._db.transaction() as conn:
            rows = (await conn.execute(select(c.key, c.detail).where(c.key != TURN_KEY))).all()
        return {r.key: r.detail for r in rows}

    async def firing_since(self) -> list[Firing]:
        """The conditions firing now, the longest-firing first (for the console)."""
        c = alerts_firing.c
        query = select(c.key, c.since, c.detail).where(c.key != TURN_KEY).order_by(c.since, c.key)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [Firing(r.key, r.since, r.detail) for r in rows]

    async def start(self, key: str, detail: str, now: datetime) -> bool:
        """Mark ``key`` firing; True only for the one caller that marked it, whose
        transaction also adds the history row (and trims the history)."""
        dialect = sqlite if self._db.is_sqlite else postgresql
        statement = (
            dialect.insert(alerts_firing)
            .values(key=key, since=now, detail=detail)
            .on_conflict_do_nothing(index_elements=["key"])
            .returning(alerts_firing.c.key)
        )
        fired = alert_history.insert().values(
            id=new_id(), key=key, detail=detail[:HISTORY_DETAIL], fired_at=now
        )
        async with self._db.transaction() as conn:
            if (await conn.execute(statement)).first() is None:
                return False
            await conn.execute(fired)
            await self._trim(conn)
        return True

    async def stop(self, key: str, now: datetime) -> bool:
        """Mark ``key`` no longer firing; True only for the one caller that did, whose
        transaction also sets ``resolved_at`` on the key's open history row."""
        h = alert_history.c
        statement = delete(alerts_firing).where(alerts_firing.c.key == key)
        resolved = (
            update(alert_history)
            .where(h.key == key, h.resolved_at.is_(None))
            .values(resolved_at=now)
        )
        async with self._db.transaction() as conn:
            if not (await conn.execute(statement)).rowcount:
                return False
            await conn.execute(resolved)
        return True

    async def history(self, *, limit: int, cursor: str | None) -> tuple[list[Fired], str | None]:
        """The history newest first (by ``fired_at``, then id), a page of ``limit``
        after the row ``cursor`` (an id of the previous page; an unknown one is an
        empty page), and the next page's cursor."""
        h = alert_history.c
        query = select(alert_history)
        if cursor is not None:
            at = select(h.fired_at).where(h.id == cursor).scalar_subquery()
            query = query.where(or_(h.fired_at < at, and_(h.fired_at == at, h.id < cursor)))
        query = query.order_by(h.fired_at.desc(), h.id.desc()).limit(limit + 1)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        page = [Fired(**row._mapping) for row in rows[:limit]]
        return page, page[-1].id if len(rows) > limit else None

    async def _trim(self, conn: AsyncConnection) -> None:
        """Drop the history beyond its newest ``history_rows``: one walk of
        ``ix_alert_history_fired_at`` to the first row too many, one delete of it and
        every older row."""
        h = alert_history.c
        edge = (
            await conn.execute(
                select(h.fired_at, h.id)
                .order_by(h.fired_at.desc(), h.id.desc())
                .offset(self._history_rows)
                .limit(1)
            )
        ).first()
        if edge is not None:
            older = or_(
                h.fired_at < edge.fired_at, and_(h.fired_at == edge.fired_at, h.id <= edge.id)
            )
            await conn.execute(delete(alert_history).where(older))

    async def take_turn(self, now: datetime, until: datetime) -> bool:
        """True when this caller may evaluate now: the lease row is free (or past
        ``since``, its expiry) and is now held until ``until``."""
        c = alerts_firing.c
        dialect = sqlite if self._db.is_sqlite else postgresql
        create = (
            dialect.insert(alerts_firing)
            .values(key=TURN_KEY, since=until, detail="")
            .on_conflict_do_nothing(index_elements=["key"])
            .returning(c.key)
        )
        renew = update(alerts_firing).where(c.key == TURN_KEY, c.since <= now).values(since=until)
        async with self._db.transaction() as conn:
            if (await conn.execute(create)).first() is not None:
                return True
            return bool((await conn.execute(renew)).rowcount)
