"""Preferences: a recipient's choice, per category and channel, to get a notification.

Read and changed through the API, and checked in the accepting transaction
(``unwanted_rows``): a new job for a recipient in a category it does not want on that
channel (its own choice, else the category's default) is stored SUPPRESSED with
error_class ``preference``, and one past the category's frequency cap for that
person with error_class ``frequency_cap``; either gets no queue entry and uses no
quota, as a suppressed address does (``homing.store.suppressions.suppress_rows``).
A send to an address (no recipient) in a category is checked against the address
opt-outs one-click unsubscribe records (``address_opt_outs``, by keyed hash), and
against the cap for that address (``_over_cap``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, delete, func, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.crypto import AddressRefs
from homing.domain.audit import AuditEvent
from homing.domain.preferences import PreferenceCheck
from homing.models import JobStatus
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.ordering import lock_by_tenant
from homing.store.sql import one_of
from homing.store.tables.core import CAPPED, CAPPED_BY_RECIPIENT, jobs
from homing.store.tables.recipients import (
    address_opt_outs,
    categories,
    recipient_preferences,
)

__all__ = [
    "FREQUENCY_CAP_ERROR_CLASS",
    "PREFERENCE_ERROR_CLASS",
    "Address",
    "PreferenceStore",
    "address_jobs_query",
    "recipient_jobs_query",
    "unwanted_rows",
]

PREFERENCE_ERROR_CLASS = "preference"
FREQUENCY_CAP_ERROR_CLASS = "frequency_cap"


class PreferenceStore:
    """The SQL of a recipient's preferences."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def chosen(self, recipient_id: str) -> dict[str, dict[str, bool]]:
        """The recipient's own choices, by category key then channel."""
        p = recipient_preferences.c
        query = select(p.category_key, p.channel, p.allowed).where(p.recipient_id == recipient_id)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        chosen: dict[str, dict[str, bool]] = {}
        for row in rows:
            chosen.setdefault(row.category_key, {})[row.channel] = bool(row.allowed)
        return chosen

    async def choose(
        self,
        recipient_id: str,
        changes: Mapping[str, Mapping[str, bool]],
        audit: AuditEvent | None = None,
    ) -> None:
        """Set the recipient's choices named in ``changes`` (the others are kept), with
        ``audit`` in the same transaction."""
        now = as_datetime(self._clock.now())
        rows = [
            {
                "recipient_id": recipient_id,
                "category_key": key,
                "channel": channel,
                "allowed": allowed,
                "updated_at": now,
            }
            for key, channels in sorted(changes.items())
            for channel, allowed in sorted(channels.items())
        ]
        if not rows:
            return
        async with self._db.transaction() as conn:
            insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            statement = insert(recipient_preferences)
            statement = statement.on_conflict_do_update(
                index_elements=["recipient_id", "category_key", "channel"],
                set_={"allowed": statement.excluded.allowed, "updated_at": now},
            )
            await conn.execute(statement, rows)
            await write_event(conn, audit)


async def unwanted_rows(
    conn: AsyncConnection,
    checked: Sequence[tuple[dict[str, Any], PreferenceCheck]],
    postgres: bool,
    refs: AddressRefs | None = None,
) -> None:
    """Turn the new, still PENDING ``jobs`` rows whose recipient does not want their
    category on their channel, whose address unsubscribed from it, or that are past
    their category's frequency cap, into SUPPRESSED ones. One query for the recipients'
    choices, one for the address opt-outs and one for the categories, whatever the
    number of rows; at most two counts per capped recipient or address (``_over_cap``).
    ``refs`` makes the refs of a row's address when its check carries none (an SMS or
    chat to an address, or any send by recipient)."""
    pending = [(row, check) for row, check in checked if row["status"] == JobStatus.PENDING.value]
    if not pending:
        return
    wanted = [(row, check) for row, check in pending if check.recipient_id is not None]
    chosen = await _chosen(conn, wanted) if wanted else {}
    await _opted_out_addresses(conn, pending, chosen, refs)
    still = [(row, check) for row, check in pending if row["status"] == JobStatus.PENDING.value]
    if not still:
        return
    found = await _categories(conn, still)
    capped: list[tuple[dict[str, Any], PreferenceCheck, dict[str, int]]] = []
    for row, check in still:
        defaults, cap = found.get((row["tenant_id"], check.category), ({}, None))
        if check.recipient_id is not None:
            choice = chosen.get((check.recipient_id, check.category, row["channel"]))
            if not (bool(defaults.get(row["channel"])) if choice is None else choice[0]):
                _suppress(row, PREFERENCE_ERROR_CLASS, "the recipient does not want this category")
                continue
        if cap is not None:
            capped.append((row, check, cap))
    if capped:
        await _over_cap(conn, capped, postgres)


def _address_refs(
    row: dict[str, Any], check: PreferenceCheck, refs: AddressRefs | None
) -> tuple[str, ...]:
    """The refs the row's address may have an opt-out under, the current key's first."""
    if check.address_ref is not None:
        return (check.address_ref, *check.earlier_refs)
    key = row.get("recipient")
    if refs is None or not key:
        return ()
    return refs.refs(row["tenant_id"], row["channel"], key)


async def _opted_out_addresses(
    conn: AsyncConnection,
    checked: Sequence[tuple[dict[str, Any], PreferenceCheck]],
    chosen: Mapping[tuple[str, str, str], tuple[bool, datetime]],
    refs: AddressRefs | None,
) -> None:
    """Suppress the rows whose address unsubscribed from their category on their
    channel, by its ref under any key held (one query for them all); an opt-out found
    under a previous key is re-keyed (``_rekey``).

    An address's opt-out (its one-click unsubscribe, or a refusal kept when a recipient
    was erased) holds for a send by recipient too, so erasing a person and creating it
    again resubscribes no one; only that recipient's own choice to get the category on
    that channel, made after the opt-out, overrides it."""
    held = [(row, check, _address_refs(row, check, refs)) for row, check in checked]
    held = [(row, check, mine) for row, check, mine in held if mine]
    if not held:
        return
    o = address_opt_outs.c
    query = select(o.tenant_id, o.channel, o.category_key, o.address_ref, o.created_at).where(
        one_of(conn, o.tenant_id, {row["tenant_id"] for row, _, _ in held}),
        one_of(conn, o.category_key, {check.category for _, check, _ in held}),
        one_of(conn, o.address_ref, {ref for _, _, mine in held for ref in mine}),
    )
    found = {tuple(r[:4]): r.created_at for r in (await conn.execute(query)).all()}
    moves: set[tuple[str, str, str, str, str]] = set()
    for row, check, (current, *earlier) in held:
        where = (row["tenant_id"], row["channel"], check.category)
        hits = [found[(*where, ref)] for ref in (current, *earlier) if (*where, ref) in found]
        moves.update((*where, old, current) for old in earlier if (*where, old) in found)
        if not hits:
            continue
        choice = None
        if check.recipient_id is not None:
            choice = chosen.get((check.recipient_id, check.category, row["channel"]))
        if choice is not None and choice[0] and choice[1] > max(hits):
            continue  # the person chose it again, after the opt-out
        _suppress(row, PREFERENCE_ERROR_CLASS, "the address unsubscribed from this category")
    if moves:
        await _rekey(conn, moves)


async def _rekey(conn: AsyncConnection, moves: set[tuple[str, str, str, str, str]]) -> None:
    """Store each address opt-out found under a previous key's ref under the current
    key's instead (tenant, channel, category, old ref, current ref), in the accepting
    transaction: lazily, as ``homing.store.suppressions.rekey`` does an erased
    address's suppression, and for the same reason (a ref cannot be recomputed without
    its address: it moves when the address is seen again, so that it outlives the old
    key's removal). At most one move per job, none without a rotation."""
    o = address_opt_outs.c
    for tenant, channel, category, old, new in sorted(moves):
        mine = (o.tenant_id == tenant) & (o.channel == channel) & (o.category_key == category)
        taken = select(o.address_ref).where(mine, o.address_ref == new).exists()
        await conn.execute(
            update(address_opt_outs)
            .where(mine, o.address_ref == old, ~taken)
            .values(address_ref=new)
        )
        await conn.execute(delete(address_opt_outs).where(mine, o.address_ref == old))


async def _chosen(
    conn: AsyncConnection, wanted: Sequence[tuple[dict[str, Any], PreferenceCheck]]
) -> dict[tuple[str, str, str], tuple[bool, datetime]]:
    """Each recipient's own choice (and when it made it), by recipient, category and
    channel."""
    p = recipient_preferences.c
    query = select(p.recipient_id, p.category_key, p.channel, p.allowed, p.updated_at).where(
        one_of(conn, p.recipient_id, {check.recipient_id or "" for _, check in wanted}),
        one_of(conn, p.category_key, {check.category for _, check in wanted}),
    )
    return {
        (r.recipient_id, r.category_key, r.channel): (bool(r.allowed), r.updated_at)
        for r in (await conn.execute(query)).all()
    }


async def _categories(
    conn: AsyncConnection, wanted: Sequence[tuple[dict[str, Any], PreferenceCheck]]
) -> dict[tuple[str, str], tuple[dict[str, bool], dict[str, int] | None]]:
    c = categories.c
    query = select(c.tenant_id, c.key, c.defaults, c.frequency_cap).where(
        one_of(conn, c.tenant_id, {row["tenant_id"] for row, _ in wanted}),
        one_of(conn, c.key, {check.category for _, check in wanted}),
    )
    rows = (await conn.execute(query)).all()
    return {(r.tenant_id, r.key): (r.defaults, r.frequency_cap) for r in rows}


async def _over_cap(
    conn: AsyncConnection,
    capped: Sequence[tuple[dict[str, Any], PreferenceCheck, dict[str, int]]],
    postgres: bool,
) -> None:
    """Suppress the rows past their category's cap for one person within its rolling
    window (jobs of any status but SUPPRESSED, plus the ones before it here).

    A person is counted however the sends were addressed. A send to a recipient counts
    that recipient's jobs in the category, on every channel, and the address-only jobs
    to its address on this channel. A send to an address counts every job to that
    address on this channel, by recipient or not. So neither way of addressing gets
    round the other's cap. On PostgreSQL each recipient and each address is counted
    under an advisory lock held to the commit, so concurrent accepts count each other:
    exact. A row with no address (an in-app item) is counted by its recipient only."""
    tally = _CapTally(conn, capped)
    await _lock_people(conn, postgres, tally.people())
    for row, check, cap in capped:
        since = row["created_at"] - timedelta(seconds=cap["per_seconds"])
        limit = cap["count"]
        mine = _address(row, check)
        if check.recipient_id is None:
            sent = await tally.to_address(mine, since, limit) if mine else 0
        else:
            sent = await tally.to_recipient(check.recipient_id, check.category, since, limit)
            sent += await tally.to_address(mine, since, limit, bare=True) if mine else 0
        if sent >= limit:
            _suppress(row, FREQUENCY_CAP_ERROR_CLASS, "the category's frequency cap is reached")
            continue
        tally.count(check, mine)


async def _lock_people(
    conn: AsyncConnection, postgres: bool, people: set[tuple[str, str, str]]
) -> None:
    """Lock each (tenant, person, category) counted here, under the tenant's cap lock
    (``lock_by_tenant``): a batch of a thousand capped sends holds one lock, not two
    thousand, since PostgreSQL's lock table is shared by every tenant."""
    keys = [(tenant, f"cap\0{person}\0{category}") for tenant, person, category in people]
    await lock_by_tenant(conn, postgres, keys, "cap\0*")


# (tenant, channel, address key, category): one address's jobs in one category.
Address = tuple[str, str, str, str]


def _address(row: dict[str, Any], check: PreferenceCheck) -> Address | None:
    key = row.get("recipient")
    return (row["tenant_id"], row["channel"], key, check.category) if key else None


class _CapTally:
    """The jobs each capped recipient and address has: those in the database, read
    once each (up to the cap: the walk stops there), plus the rows this transaction
    keeps, which are not written yet."""

    def __init__(
        self,
        conn: AsyncConnection,
        capped: Sequence[tuple[dict[str, Any], PreferenceCheck, dict[str, int]]],
    ) -> None:
        self._conn = conn
        self._capped = capped
        self._stored: dict[tuple[Any, ...], int] = {}
        self._kept: Counter[tuple[Any, ...]] = Counter()

    def people(self) -> set[tuple[str, str, str]]:
        """(tenant, recipient id or channel and address key, category) to lock."""
        found: set[tuple[str, str, str]] = set()
        for row, check, _ in self._capped:
            if check.recipient_id is not None:
                found.add((row["tenant_id"], check.recipient_id, check.category))
            if (mine := _address(row, check)) is not None:
                found.add((row["tenant_id"], f"{mine[1]}\0{mine[2]}", check.category))
        return found

    async def to_recipient(
        self, recipient_id: str, category: str, since: datetime, limit: int
    ) -> int:
        key = ("recipient", recipient_id, category)
        if key not in self._stored:
            query = recipient_jobs_query(recipient_id, category, since, limit)
            self._stored[key] = int((await self._conn.execute(query)).scalar_one())
        return self._stored[key] + self._kept[key]

    async def to_address(
        self, address: Address, since: datetime, limit: int, *, bare: bool = False
    ) -> int:
        key = ("address", bare, *address)
        if key not in self._stored:
            query = address_jobs_query(address, since, limit, bare=bare)
            self._stored[key] = int((await self._conn.execute(query)).scalar_one())
        return self._stored[key] + self._kept[key]

    def count(self, check: PreferenceCheck, address: Address | None) -> None:
        """One more job kept: to its recipient if any, and to its address."""
        if check.recipient_id is not None:
            self._kept["recipient", check.recipient_id, check.category] += 1
        if address is not None:
            self._kept[("address", False, *address)] += 1
            if check.recipient_id is None:
                self._kept[("address", True, *address)] += 1


def recipient_jobs_query(
    recipient_id: str, category: str, since: datetime, limit: int
) -> Select[int]:
    """How many jobs (but SUPPRESSED ones) a recipient got in a category since
    ``since``, counted up to ``limit`` on ``ix_jobs_capped_recipient``."""
    j = jobs.c
    where = (j.recipient_id == recipient_id, j.category == category, j.created_at > since)
    return _up_to(limit, CAPPED_BY_RECIPIENT, *where)


def address_jobs_query(
    address: Address, since: datetime, limit: int, *, bare: bool = False
) -> Select[int]:
    """How many jobs (but SUPPRESSED ones) an address got in a category on its channel
    since ``since`` (``bare``: only those sent to the address alone, no recipient),
    counted up to ``limit`` on ``ix_jobs_capped_address``."""
    tenant, channel, to, category = address
    j = jobs.c
    where = [
        j.tenant_id == tenant,
        j.recipient == to,
        j.category == category,
        j.created_at > since,
        j.channel == channel,
    ]
    if bare:
        where.append(j.recipient_id.is_(None))
    return _up_to(limit, CAPPED, *where)


def _up_to(limit: int, index: str, *where: ColumnElement[bool]) -> Select[int]:
    # The index's predicate word for word (no bound parameter): what proves the partial
    # index usable, on SQLite and in PostgreSQL's generic plans alike. Newest first: only
    # the capped index gives that order without a sort, so a planner that expects the
    # cap's rows early on a narrower index (``ix_jobs_recipient_id``) does not walk
    # every job of that recipient through it.
    j = jobs.c
    recent = (
        select(j.id)
        .where(text(index), *where)
        .order_by(j.created_at.desc())
        .limit(limit)
        .subquery()
    )
    return select(func.count()).select_from(recent)


def _suppress(row: dict[str, Any], error_class: str, error: str) -> None:
    row.update(
        status=JobStatus.SUPPRESSED.value,
        error=error,
        error_class=error_class,
        completed_at=row["created_at"],
    )
