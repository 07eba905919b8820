"""Recipients: the people a tenant sends to, by the tenant's ``external_id``.

Every statement is scoped by ``tenant_id``: one tenant's external ids never find
another's rows. How many recipients a tenant has is kept in ``recipient_counts``, so
the bound is one conditional update in the transaction that creates one, however
many exist. A recipient is deleted by its erasure (``homing.store.erasure``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.domain.audit import AuditEvent
from homing.domain.recipients import Recipient
from homing.errors import NotFound, QuotaExceeded
from homing.models import AuditAction, new_id
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.sql import one_of
from homing.store.tables.recipients import recipient_counts, recipients

__all__ = ["RECIPIENT_FIELDS", "RecipientPage", "RecipientStore"]

# The columns a tenant sets (``PUT /v1/recipients/{external_id}``).
RECIPIENT_FIELDS = frozenset(
    {"email", "phone", "telegram_chat_id", "slack_channel", "locale", "timezone", "data"}
)


@dataclass(frozen=True, slots=True)
class RecipientPage:
    """One page of a tenant's recipients by external id, and the cursor of the next."""

    entries: list[Recipient]
    next_cursor: str | None


def recipient_of_row(row: Any) -> Recipient:
    """The ``Recipient`` of a ``recipients`` row."""
    return Recipient(
        id=row.id,
        tenant_id=row.tenant_id,
        external_id=row.external_id,
        email=row.email,
        phone=row.phone,
        telegram_chat_id=row.telegram_chat_id,
        slack_channel=row.slack_channel,
        locale=row.locale,
        timezone=row.timezone,
        data=row.data,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


class RecipientStore:
    """The SQL of recipients."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def put(
        self,
        tenant_id: str,
        external_id: str,
        values: Mapping[str, Any],
        max_count: int,
        audit: AuditEvent | None = None,
    ) -> tuple[Recipient, bool]:
        """Create the recipient or change the fields named in ``values`` (the others are
        kept); True when it is new. QuotaExceeded when creating it would pass
        ``max_count`` recipients for the tenant. ``audit`` (an update's) is written in
        the transaction, naming the row, as a creation when it is one."""
        unknown = set(values) - RECIPIENT_FIELDS
        if unknown:
            raise ValueError(f"not recipient fields: {sorted(unknown)}")
        try:
            return await self._put(tenant_id, external_id, values, max_count, audit)
        except IntegrityError:
            # Created by a concurrent request since we looked: now it is an update.
            return await self._put(tenant_id, external_id, values, max_count, audit)

    async def _put(
        self,
        tenant_id: str,
        external_id: str,
        values: Mapping[str, Any],
        max_count: int,
        audit: AuditEvent | None,
    ) -> tuple[Recipient, bool]:
        now = as_datetime(self._clock.now())
        c = recipients.c
        where = (c.tenant_id == tenant_id, c.external_id == external_id)
        async with self._db.transaction() as conn:
            found = (await conn.execute(select(c.id).where(*where))).first()
            if found is not None:
                await conn.execute(
                    update(recipients).where(*where).values(**values, updated_at=now)
                )
                created = False
            else:
                await _count_one_more(conn, tenant_id, max_count)
                row = {field: values.get(field) for field in RECIPIENT_FIELDS}
                row.update(
                    id=new_id(),
                    tenant_id=tenant_id,
                    external_id=external_id,
                    created_at=now,
                    updated_at=now,
                )
                await conn.execute(recipients.insert().values(**row))
                created = True
            stored = (await conn.execute(select(recipients).where(*where))).one()
            if audit is not None:
                if created:
                    audit = replace(audit, action=AuditAction.RECIPIENT_CREATED)
                await write_event(conn, audit.about(target_id=stored.id))
        return recipient_of_row(stored), created

    async def get(self, tenant_id: str, external_id: str) -> Recipient:
        """The tenant's recipient of this external id; NotFound otherwise."""
        found = await self.find_many(tenant_id, {external_id})
        if external_id not in found:
            raise NotFound("no such recipient")
        return found[external_id]

    async def find_many(
        self, tenant_id: str, external_ids: Collection[str]
    ) -> dict[str, Recipient]:
        """The tenant's recipients of these external ids (one query), by external id."""
        if not external_ids:
            return {}
        c = recipients.c
        async with self._db.transaction() as conn:
            query = select(recipients).where(
                c.tenant_id == tenant_id, one_of(conn, c.external_id, set(external_ids))
            )
            rows = (await conn.execute(query)).all()
        return {row.external_id: recipient_of_row(row) for row in rows}

    async def page(
        self, tenant_id: str, *, limit: int = 50, cursor: str | None = None
    ) -> RecipientPage:
        """The tenant's recipients by external id; ``cursor`` is the last one seen."""
        c = recipients.c
        query = select(recipients).where(c.tenant_id == tenant_id)
        if cursor is not None:
            query = query.where(c.external_id > cursor)
        query = query.order_by(c.external_id).limit(limit + 1)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        entries = [recipient_of_row(row) for row in rows[:limit]]
        more = len(rows) > limit
        return RecipientPage(entries, entries[-1].external_id if more else None)


async def _count_one_more(conn: AsyncConnection, tenant_id: str, max_count: int) -> None:
    """Count one more recipient for the tenant, or QuotaExceeded at ``max_count``. The
    conditional update locks the tenant's counter row until the commit, so concurrent
    creates cannot pass the bound together."""
    n = recipient_counts.c
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    await conn.execute(
        insert(recipient_counts).values(tenant_id=tenant_id, count=0).on_conflict_do_nothing()
    )
    counted = await conn.execute(
        update(recipient_counts)
        .where(n.tenant_id == tenant_id, n.count < max_count)
        .values(count=n.count + 1)
    )
    if counted.rowcount == 0:
        raise QuotaExceeded(
            "this tenant has as many recipients as it may keep", {"max_recipients": max_count}
        )
