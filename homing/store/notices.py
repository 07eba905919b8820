"""Notices to tenants: recorded once per event, and the counts the periodic checks read.

A notice is a row unique on (tenant, kind, event key): recording the same event twice,
from two workers at once or from a retry, stores one row and answers None the second
time, so the notice is sent once. The tenant's hourly bound is counted in the same
transaction; a notice past it is stored ``held`` (not sent, counted in the digest).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects import postgresql, sqlite

from homing.channels import Channel
from homing.clock import Clock, as_datetime
from homing.models import new_id
from homing.store.database import Database
from homing.store.tables.core import dead_letters, notices, usage_counters

__all__ = ["Notice", "NoticeStore"]

_HOUR = 3600.0


@dataclass(kw_only=True, frozen=True, slots=True)
class Notice:
    """One notice: what happened (``kind``), to which of the tenant's objects
    (``event_key``), its facts (``data``, no secret) and whether it was held back."""

    id: str
    tenant_id: str
    kind: str
    event_key: str
    data: Mapping[str, Any] = field(repr=False)
    held: bool
    created_at: datetime


def _notice(row: Any) -> Notice:
    return Notice(
        id=row.id,
        tenant_id=row.tenant_id,
        kind=row.kind,
        event_key=row.event_key,
        data=row.data,
        held=row.held,
        created_at=row.created_at,
    )


class NoticeStore:
    """The SQL of notices, and of the usage and dead-letter counts they are made from."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def record(
        self,
        tenant_id: str,
        kind: str,
        event_key: str,
        data: Mapping[str, Any],
        max_per_hour: int,
    ) -> Notice | None:
        """Store the notice; None when this (tenant, kind, event key) was stored before.

        Held when the tenant already had ``max_per_hour`` notices in the last hour."""
        now = as_datetime(self._clock.now())
        since = as_datetime(self._clock.now() - _HOUR)
        c = notices.c
        recent = select(func.count()).where(c.tenant_id == tenant_id, c.created_at > since)
        dialect = sqlite if self._db.is_sqlite else postgresql
        async with self._db.transaction() as conn:
            held = int((await conn.execute(recent)).scalar_one()) >= max_per_hour
            row: dict[str, Any] = {
                "id": new_id(),
                "tenant_id": tenant_id,
                "kind": kind,
                "event_key": event_key,
                "data": dict(data),
                "held": held,
                "created_at": now,
            }
            statement = (
                dialect.insert(notices)
                .values(**row)
                .on_conflict_do_nothing(index_elements=["tenant_id", "kind", "event_key"])
                .returning(c.id)
            )
            if (await conn.execute(statement)).first() is None:
                return None
        return Notice(**row)

    async def held_between(self, start: datetime, end: datetime) -> dict[str, int]:
        """Notices held back per tenant, created in [start, end)."""
        c = notices.c
        query = (
            select(c.tenant_id, func.count())
            .where(c.held.is_(True), c.created_at >= start, c.created_at < end)
            .group_by(c.tenant_id)
        )
        async with self._db.transaction() as conn:
            return {r[0]: int(r[1]) for r in (await conn.execute(query)).all()}

    async def dead_letters_between(self, start: datetime, end: datetime) -> dict[str, int]:
        """Jobs dead-lettered per tenant in [start, end)."""
        c = dead_letters.c
        query = (
            select(c.tenant_id, func.count())
            .where(c.created_at >= start, c.created_at < end)
            .group_by(c.tenant_id)
        )
        async with self._db.transaction() as conn:
            return {r[0]: int(r[1]) for r in (await conn.execute(query)).all()}

    async def usage(self, period: str) -> dict[str, dict[Channel, int]]:
        """Every tenant's count per channel in the quota period ``period``."""
        c = usage_counters.c
        query = select(c.tenant_id, c.channel, c.used).where(c.period == period, c.used > 0)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        used: dict[str, dict[Channel, int]] = {}
        for row in rows:
            used.setdefault(row.tenant_id, {})[Channel(row.channel)] = row.used
        return used
