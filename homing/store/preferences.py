"""Preferences: a recipient's choice, per category and channel, to get a notification.

Read and changed through the API, and checked in the accepting transaction
(``unwanted_rows``): a new job for a recipient in a category it does not want on that
channel (its own choice, else the category's default) is stored SUPPRESSED with
error_class ``preference``, and one past the category's frequency cap for that
recipient with error_class ``frequency_cap``; either gets no queue entry and uses no
quota, as a suppressed address does (``homing.store.suppressions.suppress_rows``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.models import JobStatus
from homing.store.database import Database
from homing.store.ordering import lock_keys
from homing.store.sql import one_of
from homing.store.tables.core import jobs
from homing.store.tables.recipients import categories, recipient_preferences

__all__ = [
    "FREQUENCY_CAP_ERROR_CLASS",
    "PREFERENCE_ERROR_CLASS",
    "PreferenceCheck",
    "PreferenceStore",
    "unwanted_rows",
]

PREFERENCE_ERROR_CLASS = "preference"
FREQUENCY_CAP_ERROR_CLASS = "frequency_cap"


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
    conn: AsyncConnection,
    checked: Sequence[tuple[dict[str, Any], PreferenceCheck]],
    postgres: bool,
) -> None:
    """Turn the new, still PENDING ``jobs`` rows whose recipient does not want their
    category on their channel, or whose category's frequency cap that recipient has
    reached, into SUPPRESSED ones. One query for the recipients' choices and one for
    the categories, whatever the number of rows; one count per capped (recipient,
    category) pair."""
    wanted = [(row, check) for row, check in checked if row["status"] == JobStatus.PENDING.value]
    if not wanted:
        return
    chosen = await _chosen(conn, wanted)
    found = await _categories(conn, wanted)
    capped: list[tuple[dict[str, Any], PreferenceCheck, dict[str, int]]] = []
    for row, check in wanted:
        channel = row["channel"]
        defaults, cap = found.get((row["tenant_id"], check.category), ({}, None))
        allowed = chosen.get((check.recipient_id, check.category, channel))
        if allowed is None:
            allowed = bool(defaults.get(channel))
        if not allowed:
            _suppress(row, PREFERENCE_ERROR_CLASS, "the recipient does not want this category")
        elif cap is not None:
            capped.append((row, check, cap))
    if capped:
        await _over_cap(conn, capped, postgres)


async def _chosen(
    conn: AsyncConnection, wanted: Sequence[tuple[dict[str, Any], PreferenceCheck]]
) -> dict[tuple[str, str, str], bool]:
    p = recipient_preferences.c
    query = select(p.recipient_id, p.category_key, p.channel, p.allowed).where(
        one_of(conn, p.recipient_id, {check.recipient_id for _, check in wanted}),
        one_of(conn, p.category_key, {check.category for _, check in wanted}),
    )
    return {
        (r.recipient_id, r.category_key, r.channel): bool(r.allowed)
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
    """Suppress the rows past their category's cap for their recipient: the jobs it
    got in the rolling window (any status but SUPPRESSED) plus the ones before it
    here. On PostgreSQL each (recipient, category) pair is counted under an advisory
    lock held to the commit, so concurrent accepts count each other: exact."""
    pairs = {(row["tenant_id"], check.recipient_id, check.category) for row, check, _ in capped}
    await lock_keys(conn, postgres, [(t, f"cap\0{r}\0{c}") for t, r, c in pairs])
    counts: dict[tuple[str, str], int] = {}
    for row, check, cap in capped:
        pair = (check.recipient_id, check.category)
        if pair not in counts:
            since = row["created_at"] - timedelta(seconds=cap["per_seconds"])
            counts[pair] = await _sent_since(conn, pair, since, cap["count"])
        if counts[pair] >= cap["count"]:
            _suppress(row, FREQUENCY_CAP_ERROR_CLASS, "the category's frequency cap is reached")
        else:
            counts[pair] += 1


async def _sent_since(
    conn: AsyncConnection, pair: tuple[str, str], since: datetime, limit: int
) -> int:
    """Jobs sent to this (recipient, category) since ``since``, counted up to ``limit``
    (on ``ix_jobs_recipient_category``: the walk stops at the cap)."""
    j = jobs.c
    recent = (
        select(j.id)
        .where(
            j.recipient_id == pair[0],
            j.category == pair[1],
            j.created_at > since,
            j.status != JobStatus.SUPPRESSED.value,
        )
        .limit(limit)
        .subquery()
    )
    return int((await conn.execute(select(func.count()).select_from(recent))).scalar_one())


def _suppress(row: dict[str, Any], error_class: str, error: str) -> None:
    row.update(
        status=JobStatus.SUPPRESSED.value,
        error=error,
        error_class=error_class,
        completed_at=row["created_at"],
    )
