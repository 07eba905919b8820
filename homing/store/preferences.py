"""Preferences: a recipient's choice, per category and channel, to get a notification.

Read and changed through the API, and checked in the accepting transaction
(``unwanted_rows``): a new job for a recipient in a category it does not want on that
channel (its own choice, else the category's default) is stored SUPPRESSED with
error_class ``preference``, gets no queue entry and uses no quota, as a suppressed
address does (``homing.store.suppressions.suppress_rows``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.models import JobStatus
from homing.store.database import Database
from homing.store.sql import one_of
from homing.store.tables.recipients import categories, recipient_preferences

__all__ = ["PREFERENCE_ERROR_CLASS", "PreferenceCheck", "PreferenceStore", "unwanted_rows"]

PREFERENCE_ERROR_CLASS = "preference"


@dataclass(frozen=True, slots=True)
class PreferenceCheck:
    """What the accepting transaction checks for a job sent to a recipient in a
    category: the recipient's row id and the category's key (the channel is the job's)."""

    recipient_id: str
    category: str


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

    async def choose(self, recipient_id: str, changes: Mapping[str, Mapping[str, bool]]) -> None:
        """Set the recipient's choices named in ``changes`` (the others are kept)."""
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


async def unwanted_rows(
    conn: AsyncConnection, checked: Sequence[tuple[dict[str, Any], PreferenceCheck]]
) -> None:
    """Turn the new, still PENDING ``jobs`` rows whose recipient does not want their
    category on their channel into SUPPRESSED ones: one query for the recipients'
    choices and one for the categories' defaults, whatever the number of rows."""
    wanted = [(row, check) for row, check in checked if row["status"] == JobStatus.PENDING.value]
    if not wanted:
        return
    p = recipient_preferences.c
    query = select(p.recipient_id, p.category_key, p.channel, p.allowed).where(
        one_of(conn, p.recipient_id, {check.recipient_id for _, check in wanted}),
        one_of(conn, p.category_key, {check.category for _, check in wanted}),
    )
    chosen = {
        (r.recipient_id, r.category_key, r.channel): bool(r.allowed)
        for r in (await conn.execute(query)).all()
    }
    c = categories.c
    query = select(c.tenant_id, c.key, c.defaults).where(
        one_of(conn, c.tenant_id, {row["tenant_id"] for row, _ in wanted}),
        one_of(conn, c.key, {check.category for _, check in wanted}),
    )
    defaults = {(r.tenant_id, r.key): r.defaults for r in (await conn.execute(query)).all()}
    for row, check in wanted:
        channel = row["channel"]
        allowed = chosen.get((check.recipient_id, check.category, channel))
        if allowed is None:
            allowed = bool(defaults.get((row["tenant_id"], check.category), {}).get(channel))
        if not allowed:
            row.update(
                status=JobStatus.SUPPRESSED.value,
                error="the recipient does not want this category on this channel",
                error_class=PREFERENCE_ERROR_CLASS,
                completed_at=row["created_at"],
            )
