"""Suppressed addresses: per (tenant, channel, address); a send to one ends SUPPRESSED.

Checked twice: when a job is accepted (in the accepting transaction: the job is stored
SUPPRESSED, gets no queue entry and uses no quota) and when a worker claims it (for
suppressions added while it waited), both before any provider is called.

An erased address's suppression survives its erasure as a keyed hash
(``AddressRefs.hashed``, ``#`` and 32 hex characters) in place of the address: both
checks look for the address and its hash in the same one query, so erasure never
sends to an address again (docs/recipients.md, "Erasure"). After a master-key
rotation the hash is looked for under every key the service holds, and one found
under a previous key is moved to the current one in the same transaction (``rekey``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import delete, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.addresses import InvalidPhoneNumber, address_key, parse_mailbox, phone_key
from homing.channels import Channel
from homing.clock import Clock, as_datetime
from homing.crypto import AddressRefs
from homing.domain.audit import AuditEvent
from homing.domain.suppressions import Suppression
from homing.errors import NotFound
from homing.models import ClaimedJob, JobStatus
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.ordering import lock_ordering_keys, release_next
from homing.store.sql import one_of
from homing.store.tables.core import jobs, queue_entries
from homing.store.tables.inbound import suppressions

SUPPRESSED_ERROR_CLASS = "suppressed"


@dataclass(frozen=True, slots=True)
class SuppressionPage:
    """One page of a tenant's suppressions and the cursor of the next."""

    entries: list[Suppression]
    next_cursor: str | None


def normalize_address(value: str) -> str:
    """``"Ada <Ada@Example.com>"`` → ``ada@example.com``: the key of
    ``homing.addresses``, which the API, pacing and the sender rule share."""
    return address_key(value)


def suppression_key(channel: Channel, value: str) -> str:
    """What a suppression of ``channel`` is keyed by: an email address's key, a phone
    number's E.164 form (a value that is no number is kept stripped: it matches none),
    a chat's ``<vendor>:<chat id>`` in lower case (``@names`` ignore case)."""
    if channel is Channel.SMS:
        try:
            return phone_key(value)
        except InvalidPhoneNumber:
            return value.strip()
    if channel is Channel.CHAT:
        return value.strip().lower()
    return normalize_address(value)


def entered_key(channel: Channel, value: str) -> str:
    """What a tenant asks to suppress, read strictly as a send's ``to`` is: an email
    address by its key, a phone number in E.164; InvalidAddress or InvalidPhoneNumber
    (both ValueErrors) otherwise. ``POST /v1/suppressions`` and the console share it."""
    if channel is Channel.SMS:
        return phone_key(value)
    return parse_mailbox(value).key


def chat_recipient(kind: str, to: str) -> str:
    """The suppression key of a chat job: (vendor, chat id) as ``<vendor>:-100123``."""
    return suppression_key(Channel.CHAT, f"{kind}:{to}")


def address_key_of(channel: Channel | str, payload: Mapping[str, Any]) -> str | None:
    """The comparison key of the address a job is sent to, on a channel with
    suppressions (the jobs table keeps it as ``recipient``): an email's address key, an
    SMS's E.164 number (made so when it was accepted), a chat's ``<vendor>:<chat id>``."""
    kind = Channel(channel)
    to = payload.get("to")
    if not isinstance(to, str):
        return None
    if kind is Channel.EMAIL:
        return normalize_address(to)
    if kind is Channel.SMS:
        return to
    if kind is Channel.CHAT:
        return chat_recipient(str(payload.get("kind") or ""), to)
    return None


def _entry(row: Any) -> Suppression:
    return Suppression(
        tenant_id=row.tenant_id,
        channel=Channel(row.channel),
        address=row.address,
        reason=row.reason,
        source=row.source,
        created_at=row.created_at,
    )


async def suppress_rows(
    conn: AsyncConnection, rows: Sequence[dict[str, Any]], refs: AddressRefs | None = None
) -> None:
    """Turn the new ``jobs`` rows whose recipient is suppressed (in clear, or by its
    hash under any key ``refs`` holds once erased) into SUPPRESSED ones (one query for
    all of them), re-keying a hash found under a previous key (``rekey``). Each row
    carries its ``recipient`` already (``address_key_of`` its payload): not parsed again
    here."""
    wanted: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    earlier: dict[tuple[str, str, str], str] = {}
    for row in rows:
        address = row["recipient"]
        if address is not None:
            tenant, channel = row["tenant_id"], row["channel"]
            wanted.setdefault((tenant, channel, address), []).append(row)
            if refs is not None:
                forms = refs.hashed_forms(tenant, channel, address)
                for form in forms:
                    wanted.setdefault((tenant, channel, form), []).append(row)
                for form in forms[1:]:
                    earlier[(tenant, channel, form)] = forms[0]
    if not wanted:
        return
    c = suppressions.c
    query = select(c.tenant_id, c.channel, c.address, c.reason).where(
        one_of(conn, c.tenant_id, {tenant for tenant, _, _ in wanted}),
        one_of(conn, c.channel, {channel for _, channel, _ in wanted}),
        one_of(conn, c.address, {address for _, _, address in wanted}),
    )
    found = (await conn.execute(query)).all()
    for hit in found:
        for row in wanted.get((hit.tenant_id, hit.channel, hit.address), ()):
            row.update(
                status=JobStatus.SUPPRESSED.value,
                error=f"the recipient is suppressed ({hit.reason})",
                error_class=SUPPRESSED_ERROR_CLASS,
                completed_at=row["created_at"],
            )
    if earlier:  # only after a rotation
        await rekey(conn, _moves(found, earlier))


def _moves(
    found: Iterable[Any], earlier: dict[tuple[str, str, str], str]
) -> set[tuple[str, str, str, str]]:
    """(tenant, channel, hash under a previous key, hash under the current key) of
    the suppressions ``found`` under a previous key."""
    moves = set()
    for hit in found:
        key = (hit.tenant_id, hit.channel, hit.address)
        if key in earlier:
            moves.add((*key, earlier[key]))
    return moves


async def rekey(conn: AsyncConnection, moves: Iterable[tuple[str, str, str, str]]) -> None:
    """Store each erased address's suppression found under a previous key's hash
    under the current key's instead, in ``conn``'s transaction (lazy re-keying).

    A hash cannot be recomputed without its address, so a stored one moves to the
    current key only when its address is seen again (a send to it, accepted or
    claimed, or its erasure or lifting), and only then; the moves are those of one
    accept group or claim round, so at most one per job, and none at all unless a
    previous key is held and matched. The reason, source and date are kept; where the
    current hash is stored already the old row just goes. Sorted, so concurrent
    transactions take the rows' locks in one order. Why at all: a hash moved while
    the old key is held survives the old key's removal (docs/operations.md,
    "Rotating the master key")."""
    c = suppressions.c
    for tenant, channel, old, new in sorted(moves):
        mine = (c.tenant_id == tenant) & (c.channel == channel)
        taken = select(c.address).where(mine, c.address == new).exists()
        await conn.execute(
            update(suppressions).where(mine, c.address == old, ~taken).values(address=new)
        )
        await conn.execute(delete(suppressions).where(mine, c.address == old))


async def add_suppression(conn: AsyncConnection, values: dict[str, Any]) -> bool:
    """Insert one suppression unless the address is already suppressed; True if new."""
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    statement = insert(suppressions).values(**values).on_conflict_do_nothing()
    result = await conn.execute(statement.returning(suppressions.c.address))
    return result.first() is not None


async def remove_suppression(
    conn: AsyncConnection, tenant_id: str, channel: Channel, address: str
) -> bool:
    """Lift one suppression (an opt-in); True when there was one."""
    c = suppressions.c
    result = await conn.execute(
        delete(suppressions).where(
            c.tenant_id == tenant_id, c.channel == channel.value, c.address == address
        )
    )
    return bool(result.rowcount)


class SuppressionStore:
    """The SQL of suppressions, and of releasing jobs held for a suppressed address."""

    def __init__(self, db: Database, clock: Clock, refs: AddressRefs | None = None) -> None:
        self._db = db
        self._clock = clock
        self._refs = refs

    async def add(
        self,
        tenant_id: str,
        channel: Channel,
        address: str,
        reason: str,
        source: str,
        audit: AuditEvent | None = None,
    ) -> tuple[Suppression, bool]:
        """Suppress an address (kept as it was when it already is); True when it is new.
        ``audit`` is recorded only when it is new."""
        values = {
            "tenant_id": tenant_id,
            "channel": channel.value,
            "address": suppression_key(channel, address),
            "reason": reason,
            "source": source,
            "created_at": as_datetime(self._clock.now()),
        }
        async with self._db.transaction() as conn:
            created = await add_suppression(conn, values)
            if created:
                await write_event(conn, audit)
            c = suppressions.c
            row = (
                await conn.execute(
                    select(suppressions).where(
                        c.tenant_id == tenant_id,
                        c.channel == channel.value,
                        c.address == values["address"],
                    )
                )
            ).one()
        return _entry(row), created

    async def page(
        self,
        tenant_id: str,
        channel: Channel | None = None,
        *,
        limit: int = 50,
        cursor: str | None = None,
        prefix: str | None = None,
    ) -> SuppressionPage:
        """The tenant's suppressions by address, those starting with ``prefix`` when it
        is given (as stored: lower case, E.164); ``cursor`` is the last address seen."""
        c = suppressions.c
        query = select(suppressions).where(c.tenant_id == tenant_id)
        if channel is not None:
            query = query.where(c.channel == channel.value)
        if prefix:
            query = query.where(c.address.startswith(prefix, autoescape=True))
        if cursor is not None:
            query = query.where(c.address > cursor)
        query = query.order_by(c.address, c.channel).limit(limit + 1)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        entries = [_entry(row) for row in rows[:limit]]
        return SuppressionPage(entries, entries[-1].address if len(rows) > limit else None)

    async def remove(
        self, tenant_id: str, channel: Channel, address: str, audit: AuditEvent | None = None
    ) -> None:
        """Stop suppressing an address (recording ``audit``); NotFound when it is not
        suppressed. An erased address's suppression, kept as its keyed hash, is lifted
        by naming the address too; its audit event then names the hash, not the
        address."""
        c = suppressions.c
        key = suppression_key(channel, address)
        forms = () if self._refs is None else self._refs.hashed_forms(tenant_id, channel.value, key)
        async with self._db.transaction() as conn:
            mine = (c.tenant_id == tenant_id) & (c.channel == channel.value)
            result = await conn.execute(delete(suppressions).where(mine, c.address == key))
            lifted = result.rowcount
            if forms:
                # Under any key held: a hash stored before a rotation is lifted too.
                result = await conn.execute(delete(suppressions).where(mine, c.address.in_(forms)))
                if result.rowcount and not lifted and audit is not None:
                    audit = replace(audit, target_id=forms[0])
                lifted += result.rowcount
            if lifted:
                await write_event(conn, audit)
        if not lifted:
            raise NotFound("this address is not suppressed")


async def end_suppressed(
    conn: AsyncConnection,
    claimed: Sequence[ClaimedJob],
    epoch: float,
    refs: AddressRefs | None = None,
) -> set[str]:
    """In ``conn``'s transaction, end the claimed jobs whose recipient is suppressed
    (the claim round's step: each loses its queue entry while this claim holds it and
    becomes SUPPRESSED, and the next job of its ordering key is released), by address
    or, under ``refs``, by an erased address's keyed hash under any key it holds (one
    found under a previous key is re-keyed: ``rekey``); their ids."""
    keys = {
        c.job.id: (c.job.tenant_id, c.job.channel.value, address)
        for c in claimed
        if (address := address_key_of(c.job.channel, c.job.payload)) is not None
    }
    if not keys:
        return set()
    hashed, earlier = _hashed(keys, refs)
    wanted = set(keys.values())
    for forms in hashed.values():
        wanted.update(forms)
    s = suppressions.c
    query = select(s.tenant_id, s.channel, s.address).where(
        tuple_(s.tenant_id, s.channel, s.address).in_(sorted(wanted))
    )
    rows = (await conn.execute(query)).all()
    found = {tuple(row) for row in rows}
    hit = {
        job_id
        for job_id, key in keys.items()
        if key in found or any(form in found for form in hashed.get(job_id, ()))
    }
    ended = [job for job in claimed if job.job.id in hit]
    in_line = {(j.job.tenant_id, j.job.ordering_key) for j in ended if j.job.ordering_key}
    # All their keys at once, in one order, before any job ends (homing.store.ordering).
    await lock_ordering_keys(conn, conn.dialect.name == "postgresql", in_line)
    for job in ended:
        await _end(conn, job, epoch)
    if earlier:  # only after a rotation
        await rekey(conn, _moves(rows, earlier))
    return hit


def _hashed(
    keys: dict[str, tuple[str, str, str]], refs: AddressRefs | None
) -> tuple[dict[str, list[tuple[str, str, str]]], dict[tuple[str, str, str], str]]:
    """Each job's (tenant, channel, hash) under every key ``refs`` holds, and the
    current hash of each one under a previous key."""
    if refs is None:
        return {}, {}
    hashed: dict[str, list[tuple[str, str, str]]] = {}
    earlier: dict[tuple[str, str, str], str] = {}
    for job_id, (tenant, channel, address) in keys.items():
        forms = refs.hashed_forms(tenant, channel, address)
        hashed[job_id] = [(tenant, channel, form) for form in forms]
        for form in forms[1:]:
            earlier[(tenant, channel, form)] = forms[0]
    return hashed, earlier


async def _end(conn: AsyncConnection, claimed: ClaimedJob, epoch: float) -> None:
    job = claimed.job
    gone = await conn.execute(
        delete(queue_entries).where(
            queue_entries.c.job_id == job.id,
            queue_entries.c.claim_token == claimed.claim_token,
        )
    )
    if gone.rowcount == 0:
        return
    now = as_datetime(epoch)
    result = await conn.execute(
        update(jobs)
        .where(jobs.c.id == job.id)
        .values(
            status=JobStatus.SUPPRESSED.value,
            error="the recipient is suppressed",
            error_class=SUPPRESSED_ERROR_CLASS,
            updated_at=now,
            completed_at=now,
        )
        .returning(jobs.c.ordering_key)
    )
    key = result.scalar()
    if key is not None:  # locked by the caller
        await release_next(conn, [(job.tenant_id, key)], epoch)
