"""The SQL of erasure (docs/recipients.md, "Erasure"): one bounded batch per call.

Every method is one short transaction scoped by ``tenant_id`` that touches at most
``limit`` rows of the kind it names, and leaves nothing it has done findable by the
same search again: a scrubbed job loses its ``recipient`` column, a hashed suppression
its address. So an erasure cut short (a crash, a call's batch budget) is finished by
running it again, and no batch holds a long transaction or another tenant's rows.

Jobs are erased with everything that refers to them (attempts, dead letters, matched
inbound events and their conflicting repeats) in the same batch, and only once finished
(no queue entry): a job still queued or held by a worker is left until it ends.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, case, delete, exists, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from homing.channels import Channel
from homing.clock import Clock, as_datetime
from homing.crypto import AddressRefs
from homing.domain.audit import AuditEvent
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.erasure_steps import KEPT_SPEC, erase_digests, erase_steps
from homing.store.flow_rules import RUNNING
from homing.store.sql import one_of
from homing.store.suppressions import rekey
from homing.store.tables.audit import audit_events
from homing.store.tables.console import console_flashes, console_sessions, memberships
from homing.store.tables.core import attempts, dead_letters, jobs, queue_entries
from homing.store.tables.feed import feed_items
from homing.store.tables.inbound import inbound_conflicts, inbound_events, suppressions
from homing.store.tables.notifications import notification_steps, notifications
from homing.store.tables.recipients import (
    address_opt_outs,
    recipient_counts,
    recipient_preferences,
    recipients,
)

__all__ = ["ERASED", "ErasureStore", "ErasureTarget"]

# What replaces an erased value; a reader can tell it from any real one.
ERASED = "[erased]"

Erase = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ErasureTarget:
    """Whose data one erasure removes: a tenant's (channel, address key) pairs and,
    for a recipient, its row id (its sends by recipient, its feed, its preferences)."""

    tenant_id: str
    addresses: tuple[tuple[str, str], ...]
    recipient_id: str | None = None
    # The recipient's own id (the tenant's): its notifications and digests name it.
    external_id: str | None = None

    def __repr__(self) -> str:  # addresses are personal data: never in a repr
        return f"ErasureTarget(tenant_id={self.tenant_id!r}, addresses={len(self.addresses)})"

    @property
    def keys(self) -> set[str]:
        return {key for _, key in self.addresses}

    def named_in(self, value: str | None) -> bool:
        """Whether ``value`` (a tenant's Idempotency-Key) holds one of the target's
        addresses (a chat's by its bare id) or its external id, in any case."""
        if value is None:
            return False
        bare = {key.partition(":")[2] if ch == "chat" else key for ch, key in self.addresses}
        names = {*bare, *([self.external_id] if self.external_id else [])}
        lowered = value.lower()
        return any(name.lower() in lowered for name in names if name)


def _targeted(target: ErasureTarget, conn: AsyncConnection) -> ColumnElement[bool]:
    c = jobs.c
    by: list[ColumnElement[bool]] = []
    if target.addresses:
        by.append(one_of(conn, c.recipient, target.keys))
    if target.recipient_id is not None:
        by.append(c.recipient_id == target.recipient_id)
    if target.external_id is not None:
        # In-app jobs accepted before they kept their recipient's id name it only in
        # their payload (docs/feed.md): found by that, on the tenant's in-app jobs.
        by.append(
            (c.channel == Channel.IN_APP.value)
            & c.recipient_id.is_(None)
            & (c.payload["recipient"].as_string() == target.external_id)
        )
    return (c.tenant_id == target.tenant_id) & or_(*by)


class ErasureStore:
    """Batches of one erasure; each returns how many rows of each kind it erased."""

    def __init__(self, db: Database, clock: Clock, refs: AddressRefs) -> None:
        self._db = db
        self._clock = clock
        self._refs = refs

    def address_ref(self, tenant_id: str, channel: str, key: str) -> str:
        """The keyed hash an erased address is known by (``AddressRefs.hashed``)."""
        return self._refs.hashed(tenant_id, channel, key)

    async def jobs_batch(self, target: ErasureTarget, limit: int, erase: Erase) -> dict[str, int]:
        """Scrub up to ``limit`` finished jobs to the target (payload by ``erase``,
        recipient columns, error), with their attempts, dead letters and inbound events."""
        if not target.addresses and target.recipient_id is None:
            return {}
        finished = ~exists().where(queue_entries.c.job_id == jobs.c.id)
        async with self._db.transaction() as conn:
            query = (
                select(jobs.c.id, jobs.c.payload, jobs.c.idempotency_key)
                .where(_targeted(target, conn) & finished)
                .limit(limit)
            )
            rows = (await conn.execute(query)).all()
            if not rows:
                return {}
            ids = [row.id for row in rows]
            params = [
                {
                    "b_id": r.id,
                    "b_payload": erase(dict(r.payload)),
                    "b_key": None if target.named_in(r.idempotency_key) else r.idempotency_key,
                }
                for r in rows
            ]
            await _scrub_jobs(conn, params, as_datetime(self._clock.now()))
            counts = {"jobs": len(rows)}
            counts["dead_letters"] = await _scrub_dead_letters(conn, params)
            counts["attempts"] = await _scrub_attempts(conn, ids)
            counts["inbound_events"] = await _scrub_events(conn, inbound_events.c.job_id, ids)
            return counts

    async def waiting_jobs(self, target: ErasureTarget, limit: int) -> int:
        """How many jobs to the target are still queued or held (at most ``limit``)."""
        if not target.addresses and target.recipient_id is None:
            return 0
        waiting = exists().where(queue_entries.c.job_id == jobs.c.id)
        async with self._db.transaction() as conn:
            query = select(jobs.c.id).where(_targeted(target, conn) & waiting).limit(limit)
            return len((await conn.scalars(query)).all())

    async def events_batch(self, target: ErasureTarget, limit: int) -> int:
        """Scrub up to ``limit`` of the tenant's inbound events that name the address
        and matched no job (those of jobs go with their jobs)."""
        if not target.addresses:
            return 0
        e = inbound_events.c
        lowered = {key.lower() for key in target.keys}
        async with self._db.transaction() as conn:
            query = (
                select(e.id)
                .where(e.tenant_id == target.tenant_id, e.recipient.is_not(None))
                .where(one_of(conn, func.lower(e.recipient), lowered))
                .limit(limit)
            )
            ids = list((await conn.scalars(query)).all())
            if not ids:
                return 0
            return await _scrub_events(conn, e.id, ids)

    async def hash_suppressions(self, target: ErasureTarget) -> int:
        """Replace the target's suppressions by their keyed hashes (one per address at
        most, so no batch is needed): a send there stays suppressed."""
        kept = 0
        s = suppressions.c
        async with self._db.transaction() as conn:
            for channel, key in target.addresses:
                forms = self._refs.hashed_forms(target.tenant_id, channel, key)
                hashed = forms[0]
                # Its hash under a previous key (an erasure before a rotation) moves to
                # the current key first: the address is known here.
                await rekey(conn, [(target.tenant_id, channel, old, hashed) for old in forms[1:]])
                mine = (s.tenant_id == target.tenant_id) & (s.channel == channel)
                clear = (
                    await conn.execute(select(s.reason).where(mine & (s.address == key)))
                ).first()
                if clear is None:
                    continue
                present = await conn.scalar(select(s.address).where(mine & (s.address == hashed)))
                if present is None:
                    await conn.execute(
                        update(suppressions)
                        .where(mine & (s.address == key))
                        .values(address=hashed, event_entry_id=None)
                    )
                else:
                    await conn.execute(delete(suppressions).where(mine & (s.address == key)))
                kept += 1
        return kept

    async def keep_opt_outs(self, target: ErasureTarget) -> int:
        """Record the recipient's refusals (preferences set to false) as opt-outs of
        its addresses' keyed hashes, so erasing it resubscribes no address."""
        if target.recipient_id is None:
            return 0
        p = recipient_preferences.c
        query = select(p.category_key, p.channel).where(
            p.recipient_id == target.recipient_id, p.allowed.is_(False)
        )
        now = as_datetime(self._clock.now())
        async with self._db.transaction() as conn:
            refused = (await conn.execute(query)).all()
            rows = [
                {
                    "tenant_id": target.tenant_id,
                    "channel": channel,
                    "category_key": r.category_key,
                    "address_ref": self._refs.ref(target.tenant_id, channel, key),
                    "created_at": now,
                }
                for r in refused
                for channel, key in target.addresses
                if channel == r.channel
            ]
            if not rows:
                return 0
            insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            await conn.execute(insert(address_opt_outs).on_conflict_do_nothing(), rows)
        return len(rows)

    async def recipients_batch(
        self, target: ErasureTarget, column: str, value: str, limit: int
    ) -> dict[str, int]:
        """Clear the address from up to ``limit`` of the tenant's recipients whose
        ``column`` holds it (``value``: the address as that column keeps it, compared
        without case; an email also as ``Name <address>``), each one's refusals on the
        address's channel kept first as opt-outs of its hash."""
        r = recipients.c
        held = func.lower(r[column])
        same = held == value.lower()
        if column == "email":
            same = same | held.endswith(f"<{value.lower()}>", autoescape=True)
        query = select(r.id).where(r.tenant_id == target.tenant_id, same).limit(limit)
        async with self._db.transaction() as conn:
            ids = list((await conn.scalars(query)).all())
        kept = 0
        for recipient_id in ids:
            one = ErasureTarget(target.tenant_id, target.addresses, recipient_id)
            kept += await self.keep_opt_outs(one)
        if ids:
            async with self._db.transaction() as conn:
                now = as_datetime(self._clock.now())
                await conn.execute(
                    update(recipients)
                    .where(one_of(conn, r.id, ids), r.tenant_id == target.tenant_id)
                    .values({column: None, "updated_at": now})
                )
        return {"recipient_addresses": len(ids), "opt_outs": kept}

    async def audit_batch(self, target: ErasureTarget, limit: int) -> int:
        """Replace the address by its keyed hash in up to ``limit`` of the tenant's
        audit events that name it (a suppression's target)."""
        if not target.addresses:
            return 0
        a = audit_events.c
        async with self._db.transaction() as conn:
            query = (
                select(a.id, a.target_id)
                .where(a.tenant_id == target.tenant_id, a.target_type == "suppression")
                .where(one_of(conn, a.target_id, target.keys))
                .limit(limit)
            )
            rows = (await conn.execute(query)).all()
            channels = {key: channel for channel, key in target.addresses}
            for row in rows:
                ref = self._refs.hashed(target.tenant_id, channels[row.target_id], row.target_id)
                await conn.execute(update(audit_events).where(a.id == row.id).values(target_id=ref))
        return len(rows)

    async def flashes_batch(self, target: ErasureTarget, limit: int) -> int:
        """Delete up to ``limit`` console flashes naming the address, of the sessions of
        the tenant's members."""
        if not target.addresses:
            return 0
        f, s, m = console_flashes.c, console_sessions.c, memberships.c
        members = select(m.user_id).where(m.tenant_id == target.tenant_id)
        sessions = select(s.id).where(s.user_id.in_(members))
        naming = or_(*(f.message.contains(key, autoescape=True) for key in target.keys))
        async with self._db.transaction() as conn:
            query = select(f.id).where(f.session_id.in_(sessions), naming).limit(limit)
            ids = list((await conn.scalars(query)).all())
            if not ids:
                return 0
            await conn.execute(delete(console_flashes).where(one_of(conn, f.id, ids)))
        return len(ids)

    async def feed_batch(self, target: ErasureTarget, limit: int) -> int:
        """Delete up to ``limit`` items of the recipient's feed."""
        if target.recipient_id is None:
            return 0
        f = feed_items.c
        mine = (f.tenant_id == target.tenant_id) & (f.recipient_id == target.recipient_id)
        async with self._db.transaction() as conn:
            ids = list((await conn.scalars(select(f.id).where(mine).limit(limit))).all())
            if not ids:
                return 0
            await conn.execute(delete(feed_items).where(one_of(conn, f.id, ids)))
        return len(ids)

    async def digest_batch(self, target: ErasureTarget, limit: int) -> dict[str, int]:
        """Up to ``limit`` of the recipient's digests: ended if open (failed,
        ``erased``: none is sent afterwards), their items' data emptied, the
        recipient's id replaced (``erase_digests``)."""
        if target.external_id is None:
            return {}
        now = as_datetime(self._clock.now())
        async with self._db.transaction() as conn:
            return await erase_digests(
                conn, target.tenant_id, target.external_id, ERASED, limit, now
            )

    async def steps_batch(self, target: ErasureTarget, limit: int) -> int:
        """Drop what up to ``limit`` steps of the target's notifications keep of the
        job they would make (``erase_steps``): by recipient, its notifications'; by
        address, the steps addressed to it. A pending one ends ``skipped``."""
        if target.external_id is None and not target.addresses:
            return 0
        now = as_datetime(self._clock.now())
        async with self._db.transaction() as conn:
            return await erase_steps(
                conn, target.tenant_id, target.external_id, target.addresses, limit, now
            )

    async def notifications_batch(self, target: ErasureTarget, limit: int) -> int:
        """Replace the recipient's id by ``ERASED`` in up to ``limit`` of its finished
        notifications (their steps name channels and jobs, not the person; the jobs go
        with the jobs). A running one is left until it ends, as a queued job is."""
        if target.external_id is None:
            return 0
        n, s = notifications.c, notification_steps.c
        mine = (
            (n.tenant_id == target.tenant_id)
            & (n.recipient == target.external_id)
            & (n.status != RUNNING)
            # Its steps' specs go first (``steps_batch``): once nameless, none is found.
            & ~exists().where(s.notification_id == n.id, KEPT_SPEC)
        )
        async with self._db.transaction() as conn:
            query = select(n.id, n.idempotency_key).where(mine).limit(limit)
            rows = (await conn.execute(query)).all()
            if not rows:
                return 0
            await conn.execute(
                update(notifications)
                .where(n.id == bindparam("b_id"))
                .values(recipient=ERASED, idempotency_key=bindparam("b_key")),
                [
                    {
                        "b_id": r.id,
                        "b_key": None if target.named_in(r.idempotency_key) else r.idempotency_key,
                    }
                    for r in rows
                ],
            )
        return len(rows)

    async def running_notifications(self, target: ErasureTarget, limit: int) -> int:
        """How many of the recipient's notifications still run (at most ``limit``)."""
        if target.external_id is None:
            return 0
        n = notifications.c
        mine = (
            (n.tenant_id == target.tenant_id)
            & (n.recipient == target.external_id)
            & (n.status == RUNNING)
        )
        async with self._db.transaction() as conn:
            return len((await conn.scalars(select(n.id).where(mine).limit(limit))).all())

    async def delete_recipient(self, target: ErasureTarget, audit: AuditEvent) -> int:
        """Delete the recipient row and its preferences, with ``audit``, last of all;
        how many preferences went."""
        assert target.recipient_id is not None
        p, r, n = recipient_preferences.c, recipients.c, recipient_counts.c
        async with self._db.transaction() as conn:
            gone = await conn.execute(
                delete(recipient_preferences).where(p.recipient_id == target.recipient_id)
            )
            deleted = await conn.execute(
                delete(recipients).where(
                    r.id == target.recipient_id, r.tenant_id == target.tenant_id
                )
            )
            if deleted.rowcount:
                await conn.execute(
                    update(recipient_counts)
                    .where(n.tenant_id == target.tenant_id, n.count > 0)
                    .values(count=n.count - 1)
                )
            await write_event(conn, audit)
        return int(gone.rowcount)

    async def record(self, audit: AuditEvent) -> None:
        """Write the audit event of an address's erasure, in a transaction of its own
        after its last batch (a suspended tenant's own change is refused there)."""
        async with self._db.transaction() as conn:
            await write_event(conn, audit)


async def _scrub_jobs(conn: AsyncConnection, params: Sequence[dict[str, Any]], now: Any) -> None:
    c = jobs.c
    await conn.execute(
        update(jobs)
        .where(c.id == bindparam("b_id"))
        .values(
            payload=bindparam("b_payload"),
            # A key naming the person goes: a repeat of it is a new send (as after
            # retention), never an answer that names them.
            idempotency_key=bindparam("b_key"),
            payload_scrubbed_at=func.coalesce(c.payload_scrubbed_at, now),
            recipient=None,
            recipient_id=None,
            error=_erased_if_set(c.error),
            updated_at=now,
        ),
        params,
    )


async def _scrub_dead_letters(conn: AsyncConnection, params: Sequence[dict[str, Any]]) -> int:
    d = dead_letters.c
    ids = [p["b_id"] for p in params]
    held = await conn.scalar(
        select(func.count()).select_from(dead_letters).where(one_of(conn, d.job_id, ids))
    )
    if held:
        await conn.execute(
            update(dead_letters)
            .where(d.job_id == bindparam("b_id"))
            .values(payload=bindparam("b_payload"), error=ERASED),
            params,
        )
    return int(held or 0)


async def _scrub_attempts(conn: AsyncConnection, ids: Collection[str]) -> int:
    a = attempts.c
    result = await conn.execute(
        update(attempts)
        .where(one_of(conn, a.job_id, ids))
        .values(error=_erased_if_set(a.error), response_excerpt=_erased_if_set(a.response_excerpt))
    )
    return int(result.rowcount)


async def _scrub_events(
    conn: AsyncConnection, column: ColumnElement[Any], ids: Collection[str]
) -> int:
    """Scrub the inbound events ``column`` picks, and the conflicting repeats of each
    (``inbound_conflicts``: the same event id again with another body, which names the
    same person), found through their (source, account, event id) index."""
    e = inbound_events.c
    keys = (
        await conn.execute(
            select(e.source, e.provider_account_id, e.event_id).where(one_of(conn, column, ids))
        )
    ).all()
    if not keys:
        return 0
    result = await conn.execute(
        update(inbound_events)
        .where(one_of(conn, column, ids))
        .values(recipient=None, payload=None, raw=None, detail=None)
    )
    k = inbound_conflicts.c
    await conn.execute(
        update(inbound_conflicts)
        .where(
            k.source == bindparam("b_source"),
            k.provider_account_id == bindparam("b_account"),
            k.event_id == bindparam("b_event"),
        )
        .values(payload=None, raw=None),
        [
            {"b_source": r.source, "b_account": r.provider_account_id, "b_event": r.event_id}
            for r in keys
        ],
    )
    return int(result.rowcount)


def _erased_if_set(column: ColumnElement[Any]) -> ColumnElement[Any]:
    """NULL stays NULL (nothing to erase); any other value becomes ``ERASED``."""
    return case((column.is_(None), None), else_=ERASED)
