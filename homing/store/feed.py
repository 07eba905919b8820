"""The SQL of the in-app feed: an item and its job written together, pages newest
first, the unread count, the items after a sequence number (a stream's resume point),
and the seen/read/archive marks (docs/feed.md).

An in-app send is one transaction: its Idempotency-Key looked up, the recipient's
preference checked (``unwanted_rows``, as every accept does), the job stored COMPLETED
(or SUPPRESSED, with no item), the item stored with the recipient's next sequence
number, the oldest items beyond the recipient's cap dropped, and the job counted in the
month's usage. Sequence numbers are given under the recipient's advisory lock on
PostgreSQL (SQLite writes one at a time), so they commit in order: a stream that has
seen ``n`` misses nothing by asking for what comes after ``n``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy import and_, case, delete, func, or_, select, tuple_, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime, month_of
from homing.domain.accepting import Accepted, NewJob
from homing.domain.feed import FeedContent, FeedItem, Mark
from homing.models import JobStatus, Quota, new_id
from homing.store.accepting import StoredRow, job_row, replay
from homing.store.database import Database
from homing.store.ordering import lock_keys
from homing.store.preferences import unwanted_rows
from homing.store.rows import job_from_row
from homing.store.tables.core import jobs
from homing.store.tables.feed import feed_items, feed_secrets
from homing.store.usage import charge

__all__ = [
    "SIGNAL_CHUNK",
    "FeedSignals",
    "FeedStore",
    "write_item",
]

# Recipients per statement of the poll: 1,000 parameters, within every driver's bound.
SIGNAL_CHUNK: Final = 500


def _item(row: Any) -> FeedItem:
    return FeedItem(
        id=row.id,
        seq=int(row.seq),
        job_id=row.job_id,
        created_at=row.created_at,
        title=row.title,
        body=row.body,
        url=row.url,
        category=row.category,
        data=row.data,
        seen_at=row.seen_at,
        read_at=row.read_at,
        archived_at=row.archived_at,
    )


@dataclass(frozen=True, slots=True)
class FeedSignals:
    """What the poll of a process's open streams compares from round to round."""

    # (newest seq, unread count) by (tenant id, recipient id); a feed with no item absent.
    feeds: dict[tuple[str, str], tuple[int, int]]
    # The sealed feed secret by tenant id; a tenant without one absent.
    secrets: dict[str, str] = field(repr=False)


class FeedStore:
    """Feed items, by tenant and recipient (every statement names both)."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def write(
        self, new: NewJob, content: FeedContent, quotas: Sequence[Quota], cap: int
    ) -> Accepted:
        """Store the job and, unless the recipient's preference suppresses it, its item;
        or replay the job an earlier request with the same Idempotency-Key stored."""
        try:
            async with self._db.transaction() as conn:
                return await self._write(conn, new, content, quotas, cap)
        except IntegrityError:
            # A concurrent request with the same key committed first: answer from it.
            async with self._db.transaction() as conn:
                prior = await _prior(conn, new)
            if prior is None:
                raise
            return replay(prior, new)

    async def _write(
        self,
        conn: AsyncConnection,
        new: NewJob,
        content: FeedContent,
        quotas: Sequence[Quota],
        cap: int,
    ) -> Accepted:
        prior = await _prior(conn, new)
        if prior is not None:
            return replay(prior, new)
        postgres = not self._db.is_sqlite
        return await write_item(conn, new, content, quotas, cap, self._clock.now(), postgres)

    async def page(
        self, tenant_id: str, recipient_id: str, limit: int, before: int | None
    ) -> tuple[list[FeedItem], int | None, int]:
        """Up to ``limit`` unarchived items newest first (those before the sequence
        number ``before``), the cursor of the next page (None: the last) and the
        recipient's unread count."""
        f = feed_items.c
        query = (
            select(feed_items)
            .where(f.tenant_id == tenant_id, f.recipient_id == recipient_id)
            .where(f.archived_at.is_(None))
            .order_by(f.seq.desc())
            .limit(limit + 1)
        )
        if before is not None:
            query = query.where(f.seq < before)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
            unread = await _unread(conn, tenant_id, recipient_id)
        items = [_item(r) for r in rows[:limit]]
        more = len(rows) > limit
        return items, items[-1].seq if more and items else None, unread

    async def after(
        self, tenant_id: str, recipient_id: str, seq: int, limit: int
    ) -> tuple[list[FeedItem], int, str | None]:
        """Up to ``limit`` items after the sequence number ``seq``, oldest first
        (archived ones too: a stream shows what arrived), the unread count, and the
        tenant's feed secret (sealed) as it is now: read after the items, so a
        rotation committed before any of them is seen with them."""
        f = feed_items.c
        query = (
            select(feed_items)
            .where(f.tenant_id == tenant_id, f.recipient_id == recipient_id, f.seq > seq)
            .order_by(f.seq)
            .limit(limit)
        )
        s = feed_secrets.c
        secret = select(s.secret_sealed).where(s.tenant_id == tenant_id)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
            unread = await _unread(conn, tenant_id, recipient_id)
            sealed = (await conn.execute(secret)).scalar_one_or_none()
        return [_item(r) for r in rows], unread, sealed

    async def signals(self, keys: Sequence[tuple[str, str]]) -> FeedSignals:
        """The newest sequence number and unread count of each (tenant, recipient) of
        ``keys`` that has an item, and the feed secret (sealed) of their tenants: one
        statement per SIGNAL_CHUNK recipients and one for the secrets, each on
        indexes, whatever the number of streams open on them."""
        f = feed_items.c
        unread = func.sum(case((and_(f.read_at.is_(None), f.archived_at.is_(None)), 1), else_=0))
        feeds: dict[tuple[str, str], tuple[int, int]] = {}
        s = feed_secrets.c
        tenants = sorted({tenant for tenant, _ in keys})
        async with self._db.transaction() as conn:
            for start in range(0, len(keys), SIGNAL_CHUNK):
                chunk = list(keys[start : start + SIGNAL_CHUNK])
                query = (
                    select(f.tenant_id, f.recipient_id, func.max(f.seq), unread)
                    .where(tuple_(f.tenant_id, f.recipient_id).in_(chunk))
                    .group_by(f.tenant_id, f.recipient_id)
                )
                for row in (await conn.execute(query)).all():
                    feeds[(row[0], row[1])] = (int(row[2]), int(row[3]))
            query = select(s.tenant_id, s.secret_sealed).where(s.tenant_id.in_(tenants))
            secrets = {r.tenant_id: r.secret_sealed for r in (await conn.execute(query)).all()}
        return FeedSignals(feeds, secrets)

    async def last_seq(self, tenant_id: str, recipient_id: str) -> int:
        """The recipient's newest sequence number (0 with no item)."""
        f = feed_items.c
        query = select(func.max(f.seq)).where(
            f.tenant_id == tenant_id, f.recipient_id == recipient_id
        )
        async with self._db.transaction() as conn:
            return int((await conn.execute(query)).scalar_one() or 0)

    async def mark(
        self, tenant_id: str, recipient_id: str, item_id: str, mark: Mark
    ) -> FeedItem | None:
        """Set the item's mark once (read is seen too); the item, or None when the
        recipient has no item of this id. Repeating a mark changes nothing."""
        f = feed_items.c
        now = as_datetime(self._clock.now())
        marks = ["seen", "read"] if mark == "read" else [mark]
        owned = and_(f.tenant_id == tenant_id, f.recipient_id == recipient_id, f.id == item_id)
        async with self._db.transaction() as conn:
            for name in marks:
                column = f[f"{name}_at"]
                await conn.execute(
                    update(feed_items).where(owned, column.is_(None)).values({column: now})
                )
            row = (await conn.execute(select(feed_items).where(owned))).first()
        return _item(row) if row is not None else None


async def write_item(
    conn: AsyncConnection,
    new: NewJob,
    content: FeedContent,
    quotas: Sequence[Quota],
    cap: int,
    epoch: float,
    postgres: bool,
) -> Accepted:
    """Store a new in-app send in the caller's transaction: its job COMPLETED with its
    item (the oldest beyond ``cap`` dropped) and counted (QuotaExceeded raised before
    anything is written), or SUPPRESSED with no item
    when the recipient's preference turns it down. The Idempotency-Key is the caller's
    to have looked up (a multi-channel notification's steps carry none)."""
    row = job_row(new, epoch)
    # The job names its recipient by row id, with a category or without: erasure finds
    # a recipient's jobs by it (docs/recipients.md, "Erasure").
    row["recipient_id"] = content.recipient_id
    if new.preference is not None:
        await unwanted_rows(conn, [(row, new.preference)], postgres)
    if row["status"] == JobStatus.PENDING.value:
        # Counted first: a QuotaExceeded leaves nothing of this send in the transaction.
        if new.metered:
            await charge(conn, new.tenant_id, new.channel, 1, quotas, month_of(epoch))
        item_id = new_id()
        row.update(status=JobStatus.COMPLETED.value, completed_at=row["created_at"])
        row["payload"] = {**row["payload"], "item_id": item_id}
        await conn.execute(jobs.insert(), row)
        await _insert_item(conn, postgres, new.tenant_id, item_id, row, content)
        await _drop_beyond(conn, new.tenant_id, content.recipient_id, cap)
    else:
        await conn.execute(jobs.insert(), row)
    return Accepted(job=job_from_row(StoredRow(row)), replayed=False)


async def _prior(conn: AsyncConnection, new: NewJob) -> Any:
    if new.idempotency_key is None:
        return None
    c = jobs.c
    query = select(jobs).where(
        c.tenant_id == new.tenant_id, c.idempotency_key == new.idempotency_key
    )
    return (await conn.execute(query)).first()


async def _insert_item(
    conn: AsyncConnection,
    postgres: bool,
    tenant_id: str,
    item_id: str,
    job: dict[str, Any],
    content: FeedContent,
) -> None:
    """The item, with the recipient's next sequence number (under its lock)."""
    f = feed_items.c
    await lock_keys(conn, postgres, [(tenant_id, f"feed\0{content.recipient_id}")])
    last = await conn.execute(
        select(func.max(f.seq)).where(
            f.tenant_id == tenant_id, f.recipient_id == content.recipient_id
        )
    )
    await conn.execute(
        feed_items.insert(),
        {
            "id": item_id,
            "tenant_id": tenant_id,
            "recipient_id": content.recipient_id,
            "seq": int(last.scalar_one() or 0) + 1,
            "job_id": job["id"],
            "created_at": job["created_at"],
            "title": content.title,
            "body": content.body,
            "url": content.url,
            "category": content.category,
            "data": content.data,
        },
    )


async def _drop_beyond(conn: AsyncConnection, tenant_id: str, recipient_id: str, cap: int) -> None:
    """Keep at most ``cap`` items: drop the oldest read or archived ones first, then
    (a feed of nothing but unread items) the oldest."""
    f = feed_items.c
    mine = and_(f.tenant_id == tenant_id, f.recipient_id == recipient_id)
    # Counted up to cap + a few: the walk stops there, however old the feed.
    kept = select(f.id).where(mine).limit(cap + 8).subquery()
    count = int((await conn.execute(select(func.count()).select_from(kept))).scalar_one())
    over = count - cap
    if over <= 0:
        return
    done = or_(f.read_at.is_not(None), f.archived_at.is_not(None))
    for condition in (done, None):
        query = select(f.id).where(mine).order_by(f.seq).limit(over)
        if condition is not None:
            query = query.where(condition)
        ids = [r.id for r in (await conn.execute(query)).all()]
        if ids:
            await conn.execute(delete(feed_items).where(mine, f.id.in_(ids)))
        over -= len(ids)
        if over <= 0:
            return


async def _unread(conn: AsyncConnection, tenant_id: str, recipient_id: str) -> int:
    f = feed_items.c
    query = select(func.count()).where(
        f.tenant_id == tenant_id,
        f.recipient_id == recipient_id,
        f.read_at.is_(None),
        f.archived_at.is_(None),
    )
    return int((await conn.execute(query)).scalar_one())
