"""Applying a verified event: to one of its tenant's jobs, a suppression, a plan.

Each function runs in one transaction with the settling of the journal entry, so an
event is either fully applied and marked so, or not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.models import DeliveryEvent, EntryStatus, EventError, EventType, Payment
from homing.store.database import Database
from homing.store.inbound import event_values, settle
from homing.store.rerouting import reroute, wants_reroute
from homing.store.suppressions import (
    add_suppression,
    address_key_of,
    remove_suppression,
    suppression_key,
)
from homing.store.tables.core import jobs, tenants
from homing.store.tables.inbound import inbound_events

MAX_JOB_ID = 36
# The most jobs one provider message id can name: a SendGrid or Mailgun batch call's
# messages all share its id (homing/providers/one_answer.py), 1,000 at most.
MAX_SHARED_ID = 1000
_REASONS = {EventType.BOUNCED: "hard_bounce", EventType.COMPLAINED: "complaint"}


@dataclass(frozen=True, slots=True)
class Applied:
    """What an applied event was applied to: its job's id ("" for an opt-out, which
    names none) and the traceparent the job was accepted under, if any."""

    job_id: str
    traceparent: str | None = None


async def _find_job(conn: AsyncConnection, tenant_id: str, event: DeliveryEvent) -> Any:
    """The tenant's job on the event's channel that the event names: by hjid, else by
    provider message id; an id shared by a batch call's jobs, by the event's recipient
    among them (none when no one job of them is sent to it)."""
    c = jobs.c
    base = select(
        c.id,
        c.tenant_id,
        c.payload,
        c.status,
        c.queue,
        c.priority,
        c.provider,
        c.provider_message_id,
        c.attempts_made,
        c.skipped_providers,
        c.ordering_key,
        c.traceparent,
    ).where(jobs.c.tenant_id == tenant_id, jobs.c.channel == event.channel.value)
    hint = event.job_hint
    if hint and len(hint) <= MAX_JOB_ID:
        row = (await conn.execute(base.where(jobs.c.id == hint))).first()
        if row is not None:
            return row
    if event.message_ids:
        ids = [m for m in event.message_ids if len(m) <= 255]
        query = base.where(jobs.c.provider_message_id.in_(ids)).limit(MAX_SHARED_ID + 1)
        rows = (await conn.execute(query)).all()
        return rows[0] if len(rows) == 1 else _sent_to(rows, event)
    return None


def _sent_to(rows: Sequence[Any], event: DeliveryEvent) -> Any:
    """The one row among jobs sharing a message id whose recipient is the event's."""
    if not rows or not event.address:
        return None
    address = suppression_key(event.channel, event.address)
    matches = [r for r in rows if address_key_of(event.channel, dict(r.payload)) == address]
    return matches[0] if len(matches) == 1 else None


class DeliveryStore:
    """Applies inbound events to jobs' delivery status (forward only), and moves a
    tenant that paid to its plan."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def apply(
        self, entry_id: str, source: str, tenant_id: str, event: DeliveryEvent, unmatched: str
    ) -> Applied | None:
        """Attach the event to its job (and suppress on a hard bounce or complaint).

        Returns the job it was applied to, or None when no job of this tenant matches:
        then the entry is quarantined with ``unmatched`` as its error, in the same
        transaction.
        """
        now = as_datetime(self._clock.now())
        if event.opt_out is not None:
            return await self._opt(entry_id, source, tenant_id, event)
        async with self._db.transaction() as conn:
            job = await _find_job(conn, tenant_id, event)
            if job is None:
                values = {**event_values(event), "error": unmatched}
                await settle(conn, entry_id, EntryStatus.QUARANTINED, None, values)
                return None
            values = {**event_values(event), "job_id": job.id, "tenant_id": tenant_id}
            await settle(conn, entry_id, EntryStatus.APPLIED, now, {**values, "error": None})
            if wants_reroute(job, event):
                await reroute(conn, job, event, self._clock.now())
            address = event.address or address_key_of(event.channel, dict(job.payload))
            if event.suppresses and address:
                suppression = {
                    "tenant_id": tenant_id,
                    "channel": event.channel.value,
                    "address": suppression_key(event.channel, address),
                    "reason": _REASONS[event.type],
                    "source": source,
                    "event_entry_id": entry_id,
                    "created_at": now,
                }
                await add_suppression(conn, suppression)
        return Applied(str(job.id), job.traceparent)

    async def _opt(
        self, entry_id: str, source: str, tenant_id: str, event: DeliveryEvent
    ) -> Applied | None:
        """Suppress (STOP) or lift (START) the event's recipient on its channel; the
        entry is applied with no job (""), or quarantined when it names no recipient."""
        now = as_datetime(self._clock.now())
        values = event_values(event)
        async with self._db.transaction() as conn:
            if not event.address:
                await settle(
                    conn, entry_id, EntryStatus.QUARANTINED, None, {**values, "error": "no sender"}
                )
                return None
            address = suppression_key(event.channel, event.address)
            if event.opt_out:
                suppression = {
                    "tenant_id": tenant_id,
                    "channel": event.channel.value,
                    "address": address,
                    "reason": "opted_out",
                    "source": source,
                    "event_entry_id": entry_id,
                    "created_at": now,
                }
                await add_suppression(conn, suppression)
            else:
                await remove_suppression(conn, tenant_id, event.channel, address)
            values = {**values, "tenant_id": tenant_id, "error": None}
            await settle(conn, entry_id, EntryStatus.APPLIED, now, values)
        return Applied("")

    async def pay(
        self, entry_id: str, payment: Payment, vendor_type: str, occurred_at: datetime | None
    ) -> bool:
        """Move the tenant to the paid plan; False when a later payment already applied.

        EventError when the tenant does not exist (the entry is then quarantined).
        """
        now = as_datetime(self._clock.now())
        detail = {
            "plan": payment.plan.value,
            "amount": payment.amount,
            "currency": payment.currency,
            "reference": payment.reference,
        }
        values = {
            "tenant_id": payment.tenant_id,
            "event_type": EventType.PAYMENT.value,
            "vendor_type": vendor_type[:100],
            "occurred_at": occurred_at,
            "detail": detail,
            "error": None,
        }
        async with self._db.transaction() as conn:
            found = select(tenants.c.id).where(tenants.c.id == payment.tenant_id)
            if (await conn.execute(found)).first() is None:
                raise EventError("the payment names no tenant of this Homing")
            if await _superseded(conn, payment.tenant_id, entry_id, occurred_at):
                await settle(conn, entry_id, EntryStatus.IGNORED, now, values)
                return False
            await conn.execute(
                update(tenants)
                .where(tenants.c.id == payment.tenant_id)
                .values(plan=payment.plan.value)
            )
            await settle(conn, entry_id, EntryStatus.APPLIED, now, values)
        return True


async def _superseded(
    conn: AsyncConnection, tenant_id: str, entry_id: str, occurred_at: datetime | None
) -> bool:
    """Whether a payment that happened later was already applied to this tenant."""
    if occurred_at is None:
        return False
    c = inbound_events.c
    query = select(c.id).where(
        c.tenant_id == tenant_id,
        c.event_type == EventType.PAYMENT.value,
        c.status == EntryStatus.APPLIED.value,
        c.occurred_at > occurred_at,
        c.id != entry_id,
    )
    return (await conn.execute(query.limit(1))).first() is not None
