"""Monthly usage counters: the durable count that quotas are checked against.

One row per (tenant, month, channel). ``charge`` runs inside the transaction that
accepts the jobs, so a refused quota rolls the jobs back and a rolled-back accept uses
no quota. It never overshoots, however many processes accept at once:

- every quota on the channel names only that channel (or there is none): one upsert,
  ``INSERT … ON CONFLICT DO UPDATE SET used = used + n WHERE used + n <= limit``.
  PostgreSQL re-checks the WHERE against the latest committed row once it has the row
  lock; SQLite runs one writer at a time.
- a quota across channels (``email+webhook``): the rows of all its channels are
  created if missing, locked in channel order (``FOR UPDATE``), summed and then bumped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.channels import Channel
from homing.clock import month_end
from homing.errors import QuotaExceeded
from homing.models import Quota
from homing.store.database import Database
from homing.store.tables.core import usage_counters

_PK = ("tenant_id", "period", "channel")


def _insert(conn: AsyncConnection) -> Any:
    return pg_insert if conn.dialect.name == "postgresql" else sqlite_insert


async def charge(
    conn: AsyncConnection,
    tenant_id: str,
    channel: Channel,
    amount: int,
    quotas: Sequence[Quota],
    period: str,
) -> None:
    """Count ``amount`` jobs on ``channel``; QuotaExceeded when a quota would overflow."""
    if any(len(q.channels) > 1 for q in quotas):
        await _charge_across(conn, tenant_id, channel, amount, quotas, period)
        return
    binding = min(quotas, key=lambda q: q.limit, default=None)
    if binding is not None and amount > binding.limit:
        raise _exceeded(binding, period, used=None, requested=amount)
    c = usage_counters.c
    statement = _insert(conn)(usage_counters).values(
        tenant_id=tenant_id, period=period, channel=channel.value, used=amount
    )
    where = None if binding is None else (c.used + amount <= binding.limit)
    statement = statement.on_conflict_do_update(
        index_elements=list(_PK), set_={"used": c.used + amount}, where=where
    ).returning(c.used)
    if (await conn.execute(statement)).first() is None:
        assert binding is not None
        used = await _used(conn, tenant_id, period, {channel})
        raise _exceeded(binding, period, used=used, requested=amount)


async def _charge_across(
    conn: AsyncConnection,
    tenant_id: str,
    channel: Channel,
    amount: int,
    quotas: Sequence[Quota],
    period: str,
) -> None:
    c = usage_counters.c
    involved = sorted({ch.value for q in quotas for ch in q.channels} | {channel.value})
    rows = [{"tenant_id": tenant_id, "period": period, "channel": ch, "used": 0} for ch in involved]
    await conn.execute(_insert(conn)(usage_counters).values(rows).on_conflict_do_nothing())
    locked = (
        select(c.channel, c.used)
        .where(c.tenant_id == tenant_id, c.period == period, c.channel.in_(involved))
        .order_by(c.channel)
        .with_for_update()
    )
    used = {row.channel: row.used for row in (await conn.execute(locked)).all()}
    for quota in sorted(quotas, key=lambda q: q.name):
        total = sum(used.get(ch.value, 0) for ch in quota.channels)
        if total + amount > quota.limit:
            raise _exceeded(quota, period, used=total, requested=amount)
    await conn.execute(
        usage_counters.update()
        .where(c.tenant_id == tenant_id, c.period == period, c.channel == channel.value)
        .values(used=c.used + amount)
    )


async def _used(conn: AsyncConnection, tenant_id: str, period: str, channels: set[Channel]) -> int:
    c = usage_counters.c
    query = select(c.used).where(
        c.tenant_id == tenant_id, c.period == period, c.channel.in_([ch.value for ch in channels])
    )
    return sum(row.used for row in (await conn.execute(query)).all())


def _exceeded(quota: Quota, period: str, *, used: int | None, requested: int) -> QuotaExceeded:
    resets_at = month_end(period).isoformat().replace("+00:00", "Z")
    details: dict[str, Any] = {
        "quota": quota.name,
        "limit": quota.limit,
        "period": period,
        "resets_at": resets_at,
        "requested": requested,
    }
    state = "is used up"
    if used is not None:
        details["used"] = used
        if used < quota.limit:
            state = f"has {quota.limit - used} left and this request needs {requested}"
    return QuotaExceeded(
        f"the monthly {quota.name} quota of {quota.limit} {state}; it resets at {resets_at}",
        details,
    )


class UsageStore:
    """Reads the counters ``charge`` writes."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def used(self, tenant_id: str, period: str) -> dict[Channel, int]:
        """Jobs accepted this period, by channel (channels with none are 0)."""
        c = usage_counters.c
        query = select(c.channel, c.used).where(c.tenant_id == tenant_id, c.period == period)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        counts = dict.fromkeys(Channel, 0)
        for row in rows:
            counts[Channel(row.channel)] = row.used
        return counts
