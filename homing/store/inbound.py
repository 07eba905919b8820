"""The inbound event journal: store first, then apply, settle or quarantine.

``journal_many`` stores a body's events (in a few transactions of their own) before
anything acts on any of them, so every verified event is on disk first; a signature's
one-time value (``Nonce``) is claimed in the first of them, so it counts as used
only once its body is on disk. Applying an event (its job's history, a suppression, a
plan change) and settling its entry commit together.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.domain.inbound import Entry
from homing.errors import StoreError
from homing.models import DeliveryEvent, EntryStatus, EventType, RawEvent, new_id
from homing.store.database import Database
from homing.store.inbound_nonces import OneTime, claim
from homing.store.tables.inbound import inbound_conflicts, inbound_events

MAX_EVENT_ID = 255
# Events journaled per transaction: a body's events go in few transactions, yet no
# transaction holds SQLite's one writer for long.
JOURNAL_BATCH = 500


@dataclass(frozen=True, slots=True)
class Journaled:
    """What storing an event came to: a new entry, a repeat, or a security conflict."""

    outcome: Literal["new", "duplicate", "conflict"]
    entry_id: str
    # A duplicate of an entry that was stored but never settled (the process stopped
    # in between): applying it now completes the first delivery, it does not repeat it.
    unsettled: bool = False


def _entry(row: Any) -> Entry:
    return Entry(
        id=row.id,
        source=row.source,
        provider_account_id=row.provider_account_id,
        event_id=row.event_id,
        tenant_id=row.tenant_id,
        status=EntryStatus(row.status),
        event_type=EventType(row.event_type) if row.event_type else None,
        vendor_type=row.vendor_type,
        job_id=row.job_id,
        payload=row.payload,
        raw=row.raw,
        detail=row.detail,
        error=row.error,
        occurred_at=row.occurred_at,
        received_at=row.received_at,
        processed_at=row.processed_at,
    )


def stored_event_id(event_id: str, body_hash: str) -> str:
    """The id the journal deduplicates on: the vendor's, hashed when over-long."""
    if not event_id:
        return f"body:{body_hash}"
    if len(event_id) > MAX_EVENT_ID:
        return "sha256:" + hashlib.sha256(event_id.encode()).hexdigest()
    return event_id


def event_values(event: DeliveryEvent) -> dict[str, Any]:
    """The journal columns that say what a delivery event means."""
    return {
        "event_type": event.type.value,
        "vendor_type": event.vendor_type[:100],
        "occurred_at": event.occurred_at,
        "recipient": event.address[:320] if event.address else None,
        "detail": event.detail,
    }


def _insert(conn: AsyncConnection) -> Any:
    return pg_insert if conn.dialect.name == "postgresql" else sqlite_insert


class InboundStore:
    """The append-only journal of inbound events: unique on source, tenant and event id,
    settled once processed."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    def now(self) -> datetime:
        return as_datetime(self._clock.now())

    async def journal(
        self, source: str, account_id: str, tenant_id: str | None, raw: RawEvent
    ) -> Journaled:
        """Store one event once per (source, account, event id) (see ``journal_many``)."""
        return (await self.journal_many(source, account_id, tenant_id, [raw]))[0]

    async def journal_many(
        self,
        source: str,
        account_id: str,
        tenant_id: str | None,
        raws: Sequence[RawEvent],
        once: OneTime | None = None,
    ) -> list[Journaled]:
        """Store a body's events, each once per (source, account, event id), up to
        JOURNAL_BATCH to a transaction and a statement; one answer per event, in order.

        A repeat with the same body hash is a duplicate; with another hash it is kept
        in ``inbound_conflicts`` and never applied. A repeat of an event stored by this
        same call is a plain duplicate: it is applied once, by its first occurrence.
        ``once``: the body's one-time value, claimed in the first transaction
        (TokenReused, nothing stored, when it came before with another body).
        """
        created: set[str] = set()
        answers: list[Journaled] = []
        for start in range(0, max(len(raws), 1), JOURNAL_BATCH):
            rows = [
                self._row(source, account_id, tenant_id, raw)
                for raw in raws[start : start + JOURNAL_BATCH]
            ]
            async with self._db.transaction() as conn:
                if once is not None and start == 0:
                    await claim(conn, account_id, once, self.now())
                if rows:
                    answers += await self._journal(conn, rows, created)
        return answers

    def _row(
        self, source: str, account_id: str, tenant_id: str | None, raw: RawEvent
    ) -> dict[str, Any]:
        return {
            "source": source,
            "provider_account_id": account_id,
            "event_id": stored_event_id(raw.event_id, raw.body_hash),
            "id": new_id(),
            "tenant_id": tenant_id,
            "body_hash": raw.body_hash,
            "status": EntryStatus.RECEIVED.value,
            "payload": raw.payload,
            "raw": raw.raw,
            "error": raw.error,
            "received_at": self.now(),
        }

    async def _journal(
        self, conn: AsyncConnection, rows: list[dict[str, Any]], created: set[str]
    ) -> list[Journaled]:
        """Insert the rows that are new (one statement), then sort out the others."""
        c = inbound_events.c
        statement = _insert(conn)(inbound_events).values(rows).on_conflict_do_nothing()
        inserted = set((await conn.execute(statement.returning(c.id))).scalars())
        created |= inserted
        repeated = {row["event_id"] for row in rows if row["id"] not in inserted}
        priors: dict[str, Any] = {}
        if repeated:
            first = rows[0]
            query = select(c.id, c.event_id, c.body_hash, c.status).where(
                c.source == first["source"],
                c.provider_account_id == first["provider_account_id"],
                c.event_id.in_(sorted(repeated)),
            )
            priors = {prior.event_id: prior for prior in (await conn.execute(query)).all()}
        answers, conflicts = [], []
        for row in rows:
            prior = priors.get(row["event_id"])
            if row["id"] in inserted:
                answers.append(Journaled("new", row["id"]))
            elif prior is None:  # deleted by retention meanwhile: the vendor's retry stores it
                raise StoreError("a journal entry could be neither stored nor found")
            elif prior.body_hash == row["body_hash"]:
                unsettled = prior.status == EntryStatus.RECEIVED.value and prior.id not in created
                answers.append(Journaled("duplicate", prior.id, unsettled))
            else:
                conflict = {k: v for k, v in row.items() if k not in ("status", "error")}
                conflicts.append({**conflict, "original_hash": prior.body_hash})
                answers.append(Journaled("conflict", row["id"]))
        if conflicts:
            await conn.execute(inbound_conflicts.insert().values(conflicts))
        return answers

    async def settle(self, entry_id: str, status: EntryStatus, **values: Any) -> None:
        """Record how an entry ended: applied, ignored, or quarantined with its error."""
        done = status in (EntryStatus.APPLIED, EntryStatus.IGNORED)
        values.setdefault("error", None)
        async with self._db.transaction() as conn:
            await settle(conn, entry_id, status, self.now() if done else None, values)

    async def for_job(self, tenant_id: str, job_id: str) -> list[Entry]:
        """The events applied to one of the tenant's jobs, in the order they happened."""
        c = inbound_events.c
        query = (
            select(inbound_events)
            .where(
                c.job_id == job_id,
                c.tenant_id == tenant_id,
                c.status == EntryStatus.APPLIED.value,
            )
            .order_by(c.occurred_at, c.received_at, c.id)
        )
        async with self._db.transaction() as conn:
            return [_entry(row) for row in (await conn.execute(query)).all()]

    async def unprocessed(self, ids: Sequence[str], stale_before: datetime) -> list[Entry]:
        """Quarantined entries, and entries stored but never settled (a crash in between)
        received before ``stale_before``; only ``ids`` when given."""
        c = inbound_events.c
        query = select(inbound_events).where(
            or_(
                c.status == EntryStatus.QUARANTINED.value,
                (c.status == EntryStatus.RECEIVED.value) & (c.received_at < stale_before),
            )
        )
        if ids:
            query = query.where(c.id.in_(list(ids)))
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query.order_by(c.received_at, c.id))).all()
        return [_entry(row) for row in rows]

    async def window(
        self, since: datetime, tenant_id: str | None = None
    ) -> AsyncIterator[tuple[datetime, datetime | None, str | None, str]]:
        """(received_at, occurred_at, event_type, status) of the entries since ``since``."""
        c = inbound_events.c
        query = select(c.received_at, c.occurred_at, c.event_type, c.status).where(
            c.received_at >= since
        )
        if tenant_id is not None:
            query = query.where(c.tenant_id == tenant_id)
        async with self._db.transaction() as conn:
            result = await conn.stream(query)
            async for row in result:
                yield row.received_at, row.occurred_at, row.event_type, row.status


async def settle(
    conn: AsyncConnection,
    entry_id: str,
    status: EntryStatus,
    processed_at: datetime | None,
    values: dict[str, Any],
) -> None:
    """Update one journal entry's outcome inside the caller's transaction."""
    await conn.execute(
        update(inbound_events)
        .where(inbound_events.c.id == entry_id)
        .values(status=status.value, processed_at=processed_at, **values)
    )
