"""Searching jobs: the filters ``GET /v1/jobs`` and ``GET /admin/v1/jobs`` combine.

Every filter has an index that ends in ``id`` (``homing/store/tables/core.py``), so a page,
newest first (ids are time-ordered), reads the index backwards and stops after
``limit + 1`` rows; ``tests/store/test_job_search_plans.py`` checks the plans.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.domain.job_search import JobFilter
from homing.models import Job
from homing.store.rows import job_from_row
from homing.store.tables.core import jobs


@dataclass(frozen=True, slots=True)
class JobPage:
    """One page of jobs and the cursor of the next."""

    jobs: list[Job]
    next_cursor: str | None


def search_query(found: JobFilter, limit: int, cursor: str | None) -> Select[tuple[object]]:
    """The one statement of a search page: ``limit + 1`` rows, newest first."""
    c = jobs.c
    conditions = [
        column == value
        for column, value in (
            (c.tenant_id, found.tenant_id),
            (c.recipient, found.address),
            (c.channel, None if found.channel is None else found.channel.value),
            (c.status, None if found.status is None else found.status.value),
            (c.idempotency_key, found.idempotency_key),
        )
        if value is not None
    ]
    if found.test_only:
        conditions.append(c.test.is_(True))
    if found.since is not None:
        conditions.append(c.created_at >= found.since)
    if found.until is not None:
        conditions.append(c.created_at < found.until)
    if cursor is not None:
        conditions.append(c.id < cursor)
    return select(jobs).where(*conditions).order_by(c.id.desc()).limit(limit + 1)


async def search(
    conn: AsyncConnection, found: JobFilter, limit: int, cursor: str | None
) -> JobPage:
    """One page of the jobs ``found`` matches; ``cursor`` is the id of the last job of
    the previous page."""
    rows = (await conn.execute(search_query(found, limit, cursor))).all()
    page = [job_from_row(row) for row in rows[:limit]]
    next_cursor = page[-1].id if len(rows) > limit else None
    return JobPage(jobs=page, next_cursor=next_cursor)
