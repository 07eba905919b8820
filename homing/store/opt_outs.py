"""Changes a recipient makes through its links (docs/recipients.md, "Links"): one-click
unsubscribe and the hosted preference page.

A recipient's choices go where the accepting transaction reads them
(``recipient_preferences``); an address's unsubscribe goes into ``address_opt_outs``
under the address's keyed hash. Each change writes its audit event in its own
transaction, and only when something changed: a replayed unsubscribe changes nothing
and records nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.domain.audit import AuditEvent
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.tables.recipients import address_opt_outs, recipient_preferences, recipients

__all__ = ["OptOutStore"]


class OptOutStore:
    """The SQL of the changes a recipient's links make."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def known(self, tenant_id: str, recipient_id: str) -> bool:
        """Whether the tenant has a recipient of this row id (a link outlives the
        recipient it was made for, and names a tenant of its own)."""
        r = recipients.c
        query = select(r.id).where(r.tenant_id == tenant_id, r.id == recipient_id)
        async with self._db.transaction() as conn:
            return (await conn.execute(query)).first() is not None

    async def change(
        self,
        recipient_id: str,
        changes: Mapping[str, Mapping[str, bool]],
        audit: AuditEvent,
    ) -> dict[str, dict[str, bool]]:
        """Store the choices of ``changes`` that differ from the recipient's stored
        ones, with ``audit`` (its changes: those) when any does; what changed."""
        now = as_datetime(self._clock.now())
        async with self._db.transaction() as conn:
            stored = await _stored(conn, recipient_id, changes.keys())
            changed: dict[str, dict[str, bool]] = {}
            for key, channels in sorted(changes.items()):
                for channel, allowed in sorted(channels.items()):
                    if stored.get((key, channel)) is not allowed:
                        changed.setdefault(key, {})[channel] = allowed
            if not changed:
                return {}
            rows = [
                {"category_key": key, "channel": channel, "allowed": allowed}
                for key, channels in changed.items()
                for channel, allowed in channels.items()
            ]
            insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            statement = insert(recipient_preferences)
            statement = statement.on_conflict_do_update(
                index_elements=["recipient_id", "category_key", "channel"],
                set_={"allowed": statement.excluded.allowed, "updated_at": now},
            )
            values = [{**row, "recipient_id": recipient_id, "updated_at": now} for row in rows]
            await conn.execute(statement, values)
            await write_event(conn, _with_changes(audit, changed))
        return changed

    async def opt_out_address(
        self, tenant_id: str, channel: str, category: str, address_ref: str, audit: AuditEvent
    ) -> bool:
        """Record that the address (by its keyed hash) wants no more of ``category`` on
        ``channel``, with ``audit``; False when it was recorded already."""
        values = {
            "tenant_id": tenant_id,
            "channel": channel,
            "category_key": category,
            "address_ref": address_ref,
            "created_at": as_datetime(self._clock.now()),
        }
        async with self._db.transaction() as conn:
            insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            statement = insert(address_opt_outs).values(**values).on_conflict_do_nothing()
            result = await conn.execute(statement.returning(address_opt_outs.c.address_ref))
            created = result.first() is not None
            if created:
                await write_event(conn, audit)
        return created


async def _stored(
    conn: AsyncConnection, recipient_id: str, keys: Collection[str]
) -> dict[tuple[str, str], bool]:
    p = recipient_preferences.c
    query = select(p.category_key, p.channel, p.allowed).where(
        p.recipient_id == recipient_id, p.category_key.in_(sorted(keys))
    )
    return {(r.category_key, r.channel): bool(r.allowed) for r in await conn.execute(query)}


def _with_changes(audit: AuditEvent, changed: dict[str, dict[str, bool]]) -> AuditEvent:
    return replace(audit, changes={"categories": changed})
