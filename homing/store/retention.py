"""The SQL of retention: delete finished jobs past their age, scrub old payloads,
delete invitations that ended long enough ago, inbound events that matched no job (and
conflicting repeats), ended notifications and sent digests past the jobs' age, and signature nonces
past their window.

Each batch is one short transaction. On PostgreSQL it first takes a transaction-level
advisory lock (``pg_try_advisory_xact_lock``): when another worker holds it, the batch
does nothing and says so, so two workers never purge at once, and the lock goes with
the transaction however it ends. SQLite has one process and ``BEGIN IMMEDIATE``.

Only finished jobs are touched: a terminal status, a ``completed_at``, and no queue
entry (a job that has one still has work to do, whatever its status says). Only ended
invitations are: accepted, revoked or expired before the cutoff (a pending one expires
after now, so it is never before a cutoff in the past).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import Select, bindparam, delete, exists, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from homing.domain.digests import GATHERED
from homing.models import TERMINAL_STATUSES
from homing.store.database import Database
from homing.store.digests import FAILED, SENT
from homing.store.flow_rules import RUNNING
from homing.store.inbound_nonces import purge_expired
from homing.store.sql import one_of
from homing.store.tables.console import invitations
from homing.store.tables.core import attempts, dead_letters, jobs, queue_entries
from homing.store.tables.inbound import inbound_conflicts, inbound_events
from homing.store.tables.notifications import (
    digest_items,
    digests,
    notification_steps,
    notifications,
)

# Any fixed 64-bit number, the same in every Homing process: "retention is running".
RETENTION_LOCK_KEY = 0x486F6D696E6752  # "HomingR"

Scrub = Callable[[dict[str, Any]], dict[str, Any]]


def _finished(conn: AsyncConnection, before: datetime) -> ColumnElement[bool]:
    return (
        (jobs.c.completed_at < before)
        & one_of(conn, jobs.c.status, [s.value for s in TERMINAL_STATUSES])
        & ~exists().where(queue_entries.c.job_id == jobs.c.id)
    )


def _ended(before: datetime) -> ColumnElement[bool]:
    # Accepted or revoked only while pending, so before it expired: either moment
    # before the cutoff, or the expiry, is the end before it.
    c = invitations.c
    return (c.expires_at < before) | (c.accepted_at < before) | (c.revoked_at < before)


def _ended_digests(before: datetime) -> Select[Any]:
    """Digests sent or failed before ``before``, oldest first: by the due index
    (status, close_at), a digest closing no later than it was sent."""
    d = digests.c
    return (
        select(d.id)
        .where(d.status.in_((SENT, FAILED)), d.close_at < before.timestamp())
        .where(d.sent_at < before)
        .order_by(d.close_at)
    )


class RetentionStore:
    """Batches of the purge: jobs (with their attempts, dead letters and inbound
    events) finished before a cutoff, payloads of jobs finished before another, and
    invitations ended before a third."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def _locked_out(self, conn: AsyncConnection) -> bool:
        """True when another process holds the retention lock (PostgreSQL only)."""
        if self._db.is_sqlite:
            return False
        got = await conn.scalar(
            text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": RETENTION_LOCK_KEY}
        )
        return not got

    async def purge_jobs(self, before: datetime, limit: int) -> int | None:
        """Delete up to ``limit`` finished jobs completed before ``before``, oldest
        first, with everything that refers to them. None: another worker is purging."""
        async with self._db.transaction() as conn:
            if await self._locked_out(conn):
                return None
            query = (
                select(jobs.c.id)
                .where(_finished(conn, before))
                .order_by(jobs.c.completed_at)
                .limit(limit)
            )
            ids = list((await conn.scalars(query)).all())
            if not ids:
                return 0
            for table in (attempts, dead_letters, inbound_events):
                await conn.execute(delete(table).where(one_of(conn, table.c.job_id, ids)))
            result = await conn.execute(
                delete(jobs).where(one_of(conn, jobs.c.id, ids) & _finished(conn, before))
            )
            return int(result.rowcount)

    async def scrub_payloads(
        self, before: datetime, limit: int, scrub: Scrub, now: datetime
    ) -> int | None:
        """Replace the payloads of up to ``limit`` unscrubbed finished jobs completed
        before ``before`` (and of their dead letters) by ``scrub(payload)``, oldest
        first. None: another worker is purging."""
        async with self._db.transaction() as conn:
            if await self._locked_out(conn):
                return None
            query = (
                select(jobs.c.id, jobs.c.payload)
                .where(jobs.c.payload_scrubbed_at.is_(None) & _finished(conn, before))
                .order_by(jobs.c.completed_at)
                .limit(limit)
            )
            rows = (await conn.execute(query)).all()
            if not rows:
                return 0
            params = [{"b_id": r.id, "b_payload": scrub(dict(r.payload))} for r in rows]
            await conn.execute(
                update(jobs)
                .where(jobs.c.id == bindparam("b_id"))
                .values(payload=bindparam("b_payload"), payload_scrubbed_at=now),
                params,
            )
            await conn.execute(
                update(dead_letters)
                .where(dead_letters.c.job_id == bindparam("b_id"))
                .values(payload=bindparam("b_payload")),
                params,
            )
            return len(rows)

    async def count_jobs(self, before: datetime) -> int:
        """How many finished jobs completed before ``before`` (the dry run)."""
        async with self._db.transaction() as conn:
            query = select(func.count()).select_from(jobs).where(_finished(conn, before))
            return int(await conn.scalar(query) or 0)

    async def count_payloads(self, before: datetime, not_before: datetime) -> int:
        """How many unscrubbed finished jobs completed in [not_before, before): the
        payloads a run would scrub once the older jobs are gone (the dry run)."""
        async with self._db.transaction() as conn:
            query = (
                select(func.count())
                .select_from(jobs)
                .where(
                    jobs.c.payload_scrubbed_at.is_(None)
                    & (jobs.c.completed_at >= not_before)
                    & _finished(conn, before)
                )
            )
            return int(await conn.scalar(query) or 0)

    async def purge_invitations(self, before: datetime, limit: int) -> int | None:
        """Delete up to ``limit`` invitations that ended before ``before`` (nothing
        refers to one: its audit events name it by id only). None: another worker is
        purging."""
        async with self._db.transaction() as conn:
            if await self._locked_out(conn):
                return None
            # No index serves the end moment: unordered, a batch reads only until it
            # has its rows.
            query = select(invitations.c.id).where(_ended(before)).limit(limit)
            ids = list((await conn.scalars(query)).all())
            if not ids:
                return 0
            c = invitations.c
            result = await conn.execute(
                delete(invitations).where(one_of(conn, c.id, ids) & _ended(before))
            )
            return int(result.rowcount)

    async def purge_inbound(self, before: datetime, limit: int) -> int | None:
        """Delete up to ``limit`` inbound events received before ``before`` that
        matched no job (those of jobs go with their jobs), and up to ``limit``
        conflicting repeats (``inbound_conflicts``) received before it, oldest first by
        their ``received_at`` indexes. None: another worker is purging."""
        async with self._db.transaction() as conn:
            if await self._locked_out(conn):
                return None
            e, k = inbound_events.c, inbound_conflicts.c
            unmatched = (e.received_at < before) & e.job_id.is_(None)
            query = select(e.id).where(unmatched).order_by(e.received_at).limit(limit)
            ids = list((await conn.scalars(query)).all())
            done = 0
            if ids:
                result = await conn.execute(
                    delete(inbound_events).where(one_of(conn, e.id, ids) & unmatched)
                )
                done += int(result.rowcount)
            query = select(k.id).where(k.received_at < before).order_by(k.received_at)
            ids = list((await conn.scalars(query.limit(limit))).all())
            if ids:
                result = await conn.execute(
                    delete(inbound_conflicts).where(one_of(conn, k.id, ids))
                )
                done += int(result.rowcount)
            return done

    async def purge_notifications(self, before: datetime, limit: int) -> int | None:
        """Delete up to ``limit`` notifications that ended before ``before``, oldest
        first, with their steps (their jobs go by their own age). None: another worker
        is purging."""
        async with self._db.transaction() as conn:
            if await self._locked_out(conn):
                return None
            n = notifications.c
            ended = (n.completed_at < before) & (n.status != RUNNING)
            query = select(n.id).where(ended).order_by(n.completed_at).limit(limit)
            ids = list((await conn.scalars(query)).all())
            if not ids:
                return 0
            steps = notification_steps.c
            await conn.execute(
                delete(notification_steps).where(one_of(conn, steps.notification_id, ids))
            )
            result = await conn.execute(delete(notifications).where(one_of(conn, n.id, ids)))
            return int(result.rowcount)

    async def purge_digests(self, before: datetime, limit: int) -> int | None:
        """Delete up to ``limit`` digests sent or failed before ``before``, with their
        items and the notifications gathered into them (the notification a digest was
        sent as ends, and goes, as any other). None: another worker is purging."""
        async with self._db.transaction() as conn:
            if await self._locked_out(conn):
                return None
            ids = list((await conn.scalars(_ended_digests(before).limit(limit))).all())
            if not ids:
                return 0
            i, n = digest_items.c, notifications.c
            gathered = select(i.notification_id).where(one_of(conn, i.digest_id, ids))
            await conn.execute(
                delete(notifications).where(n.id.in_(gathered), n.status == GATHERED)
            )
            await conn.execute(delete(digest_items).where(one_of(conn, i.digest_id, ids)))
            result = await conn.execute(delete(digests).where(one_of(conn, digests.c.id, ids)))
            return int(result.rowcount)

    async def count_digests(self, before: datetime) -> int:
        """How many digests were sent or failed before ``before`` (the dry run)."""
        async with self._db.transaction() as conn:
            query = select(func.count()).select_from(_ended_digests(before).subquery())
            return int(await conn.scalar(query) or 0)

    async def count_notifications(self, before: datetime) -> int:
        """How many notifications ended before ``before`` (the dry run)."""
        async with self._db.transaction() as conn:
            n = notifications.c
            ended = (n.completed_at < before) & (n.status != RUNNING)
            return int(await conn.scalar(select(func.count()).where(ended)) or 0)

    async def count_inbound(self, before: datetime) -> int:
        """How many unmatched inbound events and conflicts were received before
        ``before`` (the dry run)."""
        async with self._db.transaction() as conn:
            e, k = inbound_events.c, inbound_conflicts.c
            events = select(func.count()).where((e.received_at < before) & e.job_id.is_(None))
            conflicts = select(func.count()).where(k.received_at < before)
            return int(await conn.scalar(events) or 0) + int(await conn.scalar(conflicts) or 0)

    async def purge_nonces(self, now: datetime, limit: int) -> int | None:
        """Delete up to ``limit`` signature nonces expired by ``now`` (their signatures
        no longer verify, so nothing needs them). None: another worker is purging."""
        async with self._db.transaction() as conn:
            if await self._locked_out(conn):
                return None
            return await purge_expired(conn, now, limit)

    async def count_invitations(self, before: datetime) -> int:
        """How many invitations ended before ``before`` (the dry run)."""
        async with self._db.transaction() as conn:
            query = select(func.count()).select_from(invitations).where(_ended(before))
            return int(await conn.scalar(query) or 0)
