"""Suppressed addresses: per (tenant, channel, address); a send to one ends SUPPRESSED.

Checked twice: when a job is accepted (in the accepting transaction: the job is stored
SUPPRESSED, gets no queue entry and uses no quota) and when a worker claims it (for
suppressions added while it waited), both before any provider is called.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.addresses import InvalidPhoneNumber, address_key, parse_mailbox, phone_key
from homing.clock import Clock, as_datetime
from homing.errors import NotFound
from homing.models import Channel, ClaimedJob, JobStatus
from homing.store.audit import AuditEvent, write_event
from homing.store.database import Database
from homing.store.ordering import lock_keys, release_next
from homing.store.sql import one_of
from homing.store.tables.core import jobs, queue_entries
from homing.store.tables.inbound import suppressions

SUPPRESSED_ERROR_CLASS = "suppressed"
# The reasons a tenant may give for a suppression of their own (``POST /v1/suppressions``).
ENTERED_REASONS = ("manual", "hard_bounce", "complaint", "unsubscribed", "opted_out")


@dataclass(frozen=True, slots=True)
class Suppression:
    """An address that must not be sent to on a channel, and why."""

    tenant_id: str
    channel: Channel
    address: str
    reason: str
    source: str
    created_at: datetime


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
    a chat's ``<vendor>:<chat id>`` in lower case (Telegram's @names ignore case)."""
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
    """The suppression key of a chat job: (vendor, chat id) as ``telegram:-100123``."""
    return suppression_key(Channel.CHAT, f"{kind}:{to}")


def recipient_of(channel: Channel | str, payload: dict[str, Any]) -> str | None:
    """The address a job is sent to, when its channel has suppressible recipients: an
    email's address key, an SMS's E.164 number (made so when it was accepted), a chat's
    ``<vendor>:<chat id>``."""
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


async def suppress_rows(conn: AsyncConnection, rows: Sequence[dict[str, Any]]) -> None:
    """Turn the new ``jobs`` rows whose recipient is suppressed into SUPPRESSED ones
    (one query for all of them). Each row carries its ``recipient`` already
    (``recipient_of`` its payload): not parsed again here."""
    wanted: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        address = row["recipient"]
        if address is not None:
            wanted.setdefault((row["tenant_id"], row["channel"], address), []).append(row)
    if not wanted:
        return
    c = suppressions.c
    query = select(c.tenant_id, c.channel, c.address, c.reason).where(
        one_of(conn, c.tenant_id, {tenant for tenant, _, _ in wanted}),
        one_of(conn, c.channel, {channel for _, channel, _ in wanted}),
        one_of(conn, c.address, {address for _, _, address in wanted}),
    )
    for found in (await conn.execute(query)).all():
        for row in wanted.get((found.tenant_id, found.channel, found.address), ()):
            row.update(
                status=JobStatus.SUPPRESSED.value,
                error=f"the recipient is suppressed ({found.reason})",
                error_class=SUPPRESSED_ERROR_CLASS,
                completed_at=row["created_at"],
            )


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

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

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
        suppressed."""
        c = suppressions.c
        async with self._db.transaction() as conn:
            result = await conn.execute(
                delete(suppressions).where(
                    c.tenant_id == tenant_id,
                    c.channel == channel.value,
                    c.address == suppression_key(channel, address),
                )
            )
            if result.rowcount:
                await write_event(conn, audit)
        if result.rowcount == 0:
            raise NotFound("this address is not suppressed")

    async def release_suppressed(self, claimed: Sequence[ClaimedJob]) -> list[ClaimedJob]:
        """End claimed jobs whose recipient is now suppressed; return the others.

        Each suppressed job loses its queue entry (only while this claim still holds
        it) and becomes SUPPRESSED; the next job of its ordering key is released.
        """
        keys = {
            c.job.id: (c.job.tenant_id, c.job.channel.value, address)
            for c in claimed
            if (address := recipient_of(c.job.channel, c.job.payload)) is not None
        }
        if not keys:
            return list(claimed)
        s = suppressions.c
        query = select(s.tenant_id, s.channel, s.address).where(
            tuple_(s.tenant_id, s.channel, s.address).in_(sorted(set(keys.values())))
        )
        async with self._db.transaction() as conn:
            found = {tuple(row) for row in (await conn.execute(query)).all()}
            hit = {c.job.id for c in claimed if keys.get(c.job.id) in found}
            for job in claimed:
                if job.job.id in hit:
                    await self._end(conn, job)
        return [c for c in claimed if c.job.id not in hit]

    async def _end(self, conn: AsyncConnection, claimed: ClaimedJob) -> None:
        job, epoch = claimed.job, self._clock.now()
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
        if key is not None:
            await lock_keys(conn, conn.dialect.name == "postgresql", [(job.tenant_id, key)])
            await release_next(conn, [(job.tenant_id, key)], epoch)
