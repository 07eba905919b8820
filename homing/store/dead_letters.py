"""The SQL of the dead-letter console: list with filters, show one, count them by
reason, provider or tenant, find ids, purge."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import ColumnElement, case, delete, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.domain.dead_letters import DeadLetter, DeadLetterFilter
from homing.errors import NotFound
from homing.store.database import Database
from homing.store.tables.core import dead_letters, jobs, tenants

# The LIKE escape character; ``q`` is matched as literal text, never as a pattern.
_ESCAPE = "\\"


@dataclass(frozen=True, slots=True)
class DeadLetterGroup:
    """How many dead letters share one reason, provider or tenant (``key``; None for
    no provider), and how many of them are not yet redriven; ``name`` is the tenant's."""

    key: str | None
    count: int
    pending: int
    name: str | None = None


# What ``DeadLetterStore.groups`` may count by.
GroupBy = Literal["error_class", "provider", "tenant"]


def escape_like(text: str) -> str:
    """``text`` with LIKE's wildcards and the escape character taken literally."""
    return (
        text.replace(_ESCAPE, _ESCAPE * 2).replace("%", _ESCAPE + "%").replace("_", _ESCAPE + "_")
    )


def _conditions(f: DeadLetterFilter, ids: Sequence[str] | None) -> list[ColumnElement[bool]]:
    c = dead_letters.c
    found: list[ColumnElement[bool]] = []
    pairs = ((c.tenant_id, f.tenant_id), (c.queue, f.queue), (c.error_class, f.error_class))
    found.extend(column == value for column, value in pairs if value is not None)
    if f.provider is not None:
        found.append(jobs.c.provider == f.provider)
    if f.since is not None:
        found.append(c.created_at >= f.since)
    if f.until is not None:
        found.append(c.created_at < f.until)
    if f.q is not None:
        pattern = f"%{escape_like(f.q.lower())}%"
        found.append(func.lower(c.error).like(pattern, escape=_ESCAPE))
    if ids is not None:
        found.append(c.id.in_(list(ids)))
    return found


def _from_row(row: Any) -> DeadLetter:
    return DeadLetter(
        id=row.id,
        job_id=row.job_id,
        tenant_id=row.tenant_id,
        queue=row.queue,
        error=row.error,
        error_class=row.error_class,
        provider=row.provider,
        created_at=row.created_at,
        redriven_at=row.redriven_at,
        payload=row.payload,
    )


def _select() -> Any:
    return select(*dead_letters.c, jobs.c.provider).join(jobs, jobs.c.id == dead_letters.c.job_id)


class DeadLetterStore:
    """Reads and deletes of ``dead_letters``; re-queueing is ``JobStore.retry``'s."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def page(
        self, f: DeadLetterFilter, *, limit: int, cursor: str | None
    ) -> tuple[list[DeadLetter], str | None]:
        """Newest first (ids are time-ordered); ``cursor`` is the last id of a page."""
        query = _select().where(*_conditions(f, None))
        if cursor is not None:
            query = query.where(dead_letters.c.id < cursor)
        query = query.order_by(dead_letters.c.id.desc()).limit(limit + 1)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        page = [_from_row(row) for row in rows[:limit]]
        return page, page[-1].id if len(rows) > limit else None

    async def groups(
        self, f: DeadLetterFilter, by: GroupBy, *, limit: int
    ) -> list[DeadLetterGroup]:
        """The matching dead letters counted by ``by``, the largest ``limit`` groups
        first: one grouped read of the filtered set."""
        c = dead_letters.c
        key = {"error_class": c.error_class, "provider": jobs.c.provider, "tenant": c.tenant_id}[by]
        n = func.count().label("n")
        pending = func.sum(case((c.redriven_at.is_(None), 1), else_=0))
        joined = dead_letters.join(jobs, jobs.c.id == c.job_id)
        columns = [key, n, pending]
        grouping = [key]
        if by == "tenant":
            joined = joined.outerjoin(tenants, tenants.c.id == c.tenant_id)
            columns.append(tenants.c.name)
            grouping.append(tenants.c.name)
        query = (
            select(*columns)
            .select_from(joined)
            .where(*_conditions(f, None))
            .group_by(*grouping)
            .order_by(n.desc(), key)
            .limit(limit)
        )
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [
            DeadLetterGroup(r[0], int(r[1]), int(r[2] or 0), r[3] if by == "tenant" else None)
            for r in rows
        ]

    async def get(self, tenant_id: str | None, dead_letter_id: str) -> DeadLetter:
        """One dead letter; another tenant's is NotFound."""
        f = DeadLetterFilter(tenant_id=tenant_id)
        query = _select().where(dead_letters.c.id == dead_letter_id, *_conditions(f, None))
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            raise NotFound("dead letter not found")
        return _from_row(row)

    async def matching(
        self,
        f: DeadLetterFilter,
        ids: Sequence[str] | None,
        *,
        after: str | None,
        limit: int,
        pending_only: bool = False,
        upto: str | None = None,
    ) -> list[tuple[str, str, str, str]]:
        """(id, tenant_id, job_id, error_class) of up to ``limit`` matches past
        ``after`` and no later than ``upto``, oldest first, for work in bounded
        batches; ``pending_only``: not yet redriven."""
        c = dead_letters.c
        query = (
            select(c.id, c.tenant_id, c.job_id, c.error_class)
            .join(jobs, jobs.c.id == c.job_id)
            .where(*_conditions(f, ids))
        )
        if after is not None:
            query = query.where(c.id > after)
        if upto is not None:
            query = query.where(c.id <= upto)
        if pending_only:
            query = query.where(c.redriven_at.is_(None))
        query = query.order_by(c.id).limit(limit)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [(row.id, row.tenant_id, row.job_id, row.error_class) for row in rows]

    async def newest(self, f: DeadLetterFilter, ids: Sequence[str] | None) -> str | None:
        """The id of the newest dead letter matching now (ids grow with time): a bulk
        action stops there, so the dead letters its own work makes are not its."""
        c = dead_letters.c
        query = (
            select(func.max(c.id))
            .select_from(dead_letters.join(jobs, jobs.c.id == c.job_id))
            .where(*_conditions(f, ids))
        )
        async with self._db.transaction() as conn:
            newest: str | None = await conn.scalar(query)
        return newest

    async def delete(self, tenant_id: str | None, ids: Sequence[str]) -> int:
        """Delete these dead-letter rows (the jobs stay); how many went."""
        async with self._db.transaction() as conn:
            return await _delete(conn, tenant_id, ids)


async def _delete(conn: AsyncConnection, tenant_id: str | None, ids: Sequence[str]) -> int:
    query = delete(dead_letters).where(dead_letters.c.id.in_(list(ids)))
    if tenant_id is not None:
        query = query.where(dead_letters.c.tenant_id == tenant_id)
    result = await conn.execute(query)
    return int(result.rowcount or 0)
