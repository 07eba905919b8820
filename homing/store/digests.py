"""The SQL of digests (docs/notifications.md, "Digests").

A digest is a row per (tenant, recipient, key, window) with its close time, and one
item per notification gathered into it, in order. Gathering is one transaction: the
notification's row (``gathered``, naming its digest), the item, and the digest's
count, with the Idempotency-Key checked in it as for any notification. It joins the
newest window of its recipient and key while that is open, its close time not yet
come and it has room; otherwise it opens the next one (``seq`` + 1, unique, so two
accepts opening one window at once make one row). The newest window's row is locked
while an item joins it, so the sweep's close, which is conditional on the status and
the count it read, either sees the item or does not close that window then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.domain.digests import GATHERED, DueDigest, Gathering
from homing.domain.notification_rows import Notification
from homing.errors import StoreError
from homing.models import new_id
from homing.store.database import Database
from homing.store.notification_rows import prior_notification, read
from homing.store.tables.notifications import digest_items, digests, notifications

__all__ = [
    "FAILED",
    "OPEN",
    "SENT",
    "DigestLimits",
    "DigestStore",
    "mark_sent",
]

OPEN = "open"
SENT = "sent"
FAILED = "failed"

_d = digests.c


@dataclass(frozen=True, slots=True)
class DigestLimits:
    """How much one window holds: past either bound the next window opens."""

    max_items: int = 1000
    max_bytes: int = 60_000


class DigestStore:
    """Digests by tenant: gathering into them, and what the sweep reads and records."""

    def __init__(self, db: Database, clock: Clock, limits: DigestLimits) -> None:
        self._db = db
        self._clock = clock
        self._limits = limits

    async def gather(self, g: Gathering) -> tuple[Notification, bool]:
        """Store the notification gathered into its window; or the one an earlier
        request with the same Idempotency-Key stored (replayed: True)."""
        try:
            async with self._db.transaction() as conn:
                return await self._gather(conn, g)
        except IntegrityError:
            async with self._db.transaction() as conn:
                prior = await prior_notification(
                    conn, g.tenant_id, g.idempotency_key, g.request_hash
                )
            if prior is None:
                raise
            return prior, True

    async def due(self, now: float, limit: int, per_tenant: int) -> list[DueDigest]:
        """Up to ``limit`` open digests whose window closed by ``now``, at most
        ``per_tenant`` of any one tenant, the oldest of each tenant first: a tenant with
        many due digests takes its turn with the others."""
        turn = func.row_number().over(partition_by=_d.tenant_id, order_by=(_d.close_at, _d.id))
        inner = (
            select(_d.id, _d.close_at, turn.label("turn"))
            .where(_d.status == OPEN, _d.close_at <= now)
            .subquery()
        )
        query = (
            select(digests)
            .join(inner, inner.c.id == _d.id)
            .where(inner.c.turn <= per_tenant)
            .order_by(inner.c.turn, inner.c.close_at, inner.c.id)
            .limit(limit)
        )
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [
            DueDigest(
                id=r.id,
                tenant_id=r.tenant_id,
                recipient=r.recipient,
                key=r.key,
                item_count=r.item_count,
                request=r.request,
                api_key_id=r.api_key_id,
            )
            for r in rows
        ]

    async def items(self, digest_id: str, count: int) -> list[Any]:
        """The data of the digest's first ``count`` items, in order."""
        query = (
            select(digest_items.c.data)
            .where(digest_items.c.digest_id == digest_id, digest_items.c.position < count)
            .order_by(digest_items.c.position)
        )
        async with self._db.transaction() as conn:
            return list((await conn.execute(query)).scalars())

    async def fail(self, digest_id: str, count: int, reason: str) -> bool:
        """Record that the digest could not be sent (``reason``: the refusal's code),
        if it is still open with ``count`` items; whether this call recorded it."""
        now = as_datetime(self._clock.now())
        async with self._db.transaction() as conn:
            done = await conn.execute(
                update(digests)
                .where(_d.id == digest_id, _d.status == OPEN, _d.item_count == count)
                .values(status=FAILED, reason=reason[:40], sent_at=now)
            )
        return bool(done.rowcount == 1)

    async def _gather(self, conn: AsyncConnection, g: Gathering) -> tuple[Notification, bool]:
        prior = await prior_notification(conn, g.tenant_id, g.idempotency_key, g.request_hash)
        if prior is not None:
            return prior, True
        notification_id = new_id()
        digest_id, position = await self._join(conn, g)
        now = as_datetime(self._clock.now())
        await conn.execute(
            notifications.insert(),
            {
                "id": notification_id,
                "tenant_id": g.tenant_id,
                "strategy": g.strategy,
                "status": GATHERED,
                "escalate_after_seconds": g.escalate_after_seconds,
                "recipient": g.recipient,
                "template": g.template,
                "category": g.category,
                "idempotency_key": g.idempotency_key,
                "request_hash": g.request_hash,
                "created_at": now,
                "updated_at": now,
                "completed_at": None,
                "digest_id": digest_id,
            },
        )
        item = {"digest_id": digest_id, "position": position, "data": g.data}
        await conn.execute(digest_items.insert(), {**item, "notification_id": notification_id})
        return await read(conn, g.tenant_id, notification_id), False

    async def _join(self, conn: AsyncConnection, g: Gathering) -> tuple[str, int]:
        """The window the item joins (the newest, locked, while it is open, not yet
        due and has room; else the next, opened now) and its position in it."""
        now = self._clock.now()
        for _ in range(3):
            newest = (
                await conn.execute(
                    select(digests)
                    .where(_d.tenant_id == g.tenant_id, _d.recipient == g.recipient)
                    .where(_d.key == g.key)
                    .order_by(_d.seq.desc())
                    .limit(1)
                    .with_for_update()
                )
            ).first()
            if newest is not None and self._joins(newest, g, now):
                await conn.execute(
                    update(digests)
                    .where(_d.id == newest.id)
                    .values(item_count=_d.item_count + 1, data_bytes=_d.data_bytes + g.data_bytes)
                )
                return newest.id, int(newest.item_count)
            seq = 0 if newest is None else newest.seq + 1
            opened = await self._open(conn, g, seq, now)
            if opened is not None:
                return opened, 0
        raise StoreError("no digest window could be opened")

    def _joins(self, newest: Any, g: Gathering, now: float) -> bool:
        limits = self._limits
        return bool(
            newest.status == OPEN
            and newest.close_at > now
            and newest.item_count < limits.max_items
            and newest.data_bytes + g.data_bytes <= limits.max_bytes
        )

    async def _open(self, conn: AsyncConnection, g: Gathering, seq: int, now: float) -> str | None:
        """A new window, seq ``seq``; None when another accept opened it first."""
        digest_id = new_id()
        insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
        statement = (
            insert(digests)
            .values(
                id=digest_id,
                tenant_id=g.tenant_id,
                recipient=g.recipient,
                key=g.key,
                seq=seq,
                status=OPEN,
                reason=None,
                close_at=g.close_at,
                item_count=1,
                data_bytes=g.data_bytes,
                request=g.request,
                api_key_id=g.api_key_id,
                notification_id=None,
                created_at=as_datetime(now),
                sent_at=None,
            )
            .on_conflict_do_nothing(index_elements=["tenant_id", "recipient", "key", "seq"])
        )
        opened = await conn.execute(statement)
        return digest_id if opened.rowcount == 1 else None


async def mark_sent(
    conn: AsyncConnection, digest_id: str, count: int, notification_id: str, now: float
) -> bool:
    """Mark the digest sent as ``notification_id``, if it is still open with ``count``
    items (in the transaction that stores that notification): whether this call did.
    Two sweeps closing one digest: the second finds it sent (on PostgreSQL it waits on
    the first's row lock, then re-reads it), and its transaction is rolled back."""
    done = await conn.execute(
        update(digests)
        .where(_d.id == digest_id, _d.status == OPEN, _d.item_count == count)
        .values(status=SENT, notification_id=notification_id, sent_at=as_datetime(now))
    )
    return bool(done.rowcount == 1)
