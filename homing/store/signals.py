"""The signals the operator's alerts watch, and which alerts are firing.

Each read is one grouped statement over a window on an indexed time column
(``attempts.started_at``, ``inbound_events.received_at``, ``dead_letters.created_at``,
``jobs.completed_at``), so its cost follows the window's rows, not the tables'.
``alerts_firing`` holds one row per condition firing now: starting is an insert that
only one process wins, stopping a delete that only one process wins, so however many
processes evaluate, each alert and each "resolved" is sent once. ``take_turn`` is a
lease on one row that lets one process evaluate per interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import case, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from homing.models import AttemptOutcome, EntryStatus
from homing.store.database import Database
from homing.store.inbound_schema import inbound_events
from homing.store.schema import alerts_firing, attempts, dead_letters, jobs

__all__ = ["Firing", "InboundWindow", "ProviderCalls", "SignalStore"]

# The evaluator's lease row in ``alerts_firing`` (a key no condition uses).
TURN_KEY = "_evaluator"
# Lags read for the inbound p95: the newest this many events of the window.
MAX_LAG_SAMPLE = 10_000
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
class InboundWindow:
    """The window's inbound events: how many, how many quarantined, and the lags
    (received - occurred, seconds) of the newest of them that carry an occurred_at."""

    events: int
    quarantined: int
    lags: list[float]


class SignalStore:
    """The SQL of the alerts' signals and of their firing state."""

    def __init__(self, db: Database) -> None:
        self._db = db

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
        """Mark ``key`` firing; True only for the one caller that marked it."""
        dialect = sqlite if self._db.is_sqlite else postgresql
        statement = (
            dialect.insert(alerts_firing)
            .values(key=key, since=now, detail=detail)
            .on_conflict_do_nothing(index_elements=["key"])
            .returning(alerts_firing.c.key)
        )
        async with self._db.transaction() as conn:
            return (await conn.execute(statement)).first() is not None

    async def stop(self, key: str) -> bool:
        """Mark ``key`` no longer firing; True only for the one caller that did."""
        statement = delete(alerts_firing).where(alerts_firing.c.key == key)
        async with self._db.transaction() as conn:
            return bool((await conn.execute(statement)).rowcount)

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
