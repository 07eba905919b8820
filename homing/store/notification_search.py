"""Reading a tenant's notifications for the console (docs/console.md): a page of them,
newest first, and the notification a job is a step of.

A page reads ``ix_notifications_tenant`` (or ``ix_notifications_tenant_status`` with a
status) backwards from the cursor and stops after ``limit + 1`` rows (ids are
time-ordered, as jobs' are: ``homing.store.job_search``); its steps are one more
statement over the page's ids. The notification of a job is found by
``ix_notification_steps_job`` (migration 0038). Every statement names the tenant.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.domain.notification_rows import Notification
from homing.domain.notification_search import NotificationFilter
from homing.store.notification_rows import read
from homing.store.tables.notifications import notification_steps, notifications

__all__ = [
    "NotificationPage",
    "Summary",
    "of_job",
    "page_query",
    "search",
    "step_of_job_query",
]

_notes = notifications.c
_steps = notification_steps.c


@dataclass(kw_only=True, frozen=True, slots=True)
class Summary:
    """A notification as a list shows it: its steps as (channel, status), in order."""

    id: str
    status: str
    strategy: str
    recipient: str
    template: str
    category: str | None
    created_at: datetime
    steps: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class NotificationPage:
    """One page of notifications and the cursor of the next."""

    notifications: list[Summary]
    next_cursor: str | None


def page_query(found: NotificationFilter, limit: int, cursor: str | None) -> Select[Any]:
    """The statement of a page: ``limit + 1`` notifications, newest first."""
    conditions = [_notes.tenant_id == found.tenant_id]
    if found.status is not None:
        conditions.append(_notes.status == found.status)
    if cursor is not None:
        conditions.append(_notes.id < cursor)
    return select(notifications).where(*conditions).order_by(_notes.id.desc()).limit(limit + 1)


def step_of_job_query(tenant_id: str, job_id: str) -> Select[Any]:
    """The statement that finds the step (notification, position) a job is."""
    return select(_steps.notification_id, _steps.position).where(
        _steps.job_id == job_id, _steps.tenant_id == tenant_id
    )


async def search(
    conn: AsyncConnection, found: NotificationFilter, limit: int, cursor: str | None
) -> NotificationPage:
    """One page of the notifications ``found`` matches, newest first; ``cursor`` is the
    id of the last one of the previous page."""
    found_rows = (await conn.execute(page_query(found, limit, cursor))).all()
    rows = found_rows[:limit]
    steps = await _steps_of(conn, found.tenant_id, [r.id for r in rows])
    page = [
        Summary(
            id=r.id,
            status=r.status,
            strategy=r.strategy,
            recipient=r.recipient,
            template=r.template,
            category=r.category,
            created_at=r.created_at,
            steps=tuple(steps[r.id]),
        )
        for r in rows
    ]
    return NotificationPage(page, page[-1].id if len(found_rows) > limit else None)


async def _steps_of(
    conn: AsyncConnection, tenant_id: str, ids: list[str]
) -> dict[str, list[tuple[str, str]]]:
    """The (channel, status) of each step of the notifications ``ids``, in order."""
    steps: dict[str, list[tuple[str, str]]] = defaultdict(list)
    if not ids:
        return steps
    query = (
        select(_steps.notification_id, _steps.channel, _steps.status)
        .where(_steps.tenant_id == tenant_id, _steps.notification_id.in_(ids))
        .order_by(_steps.notification_id, _steps.position)
    )
    for step in await conn.execute(query):
        steps[step.notification_id].append((step.channel, step.status))
    return steps


async def of_job(
    conn: AsyncConnection, tenant_id: str, job_id: str
) -> tuple[Notification, int] | None:
    """The tenant's notification ``job_id`` is a step of, and the step's position;
    None when it is none's (a single send, or another tenant's job)."""
    step = (await conn.execute(step_of_job_query(tenant_id, job_id))).first()
    if step is None:
        return None
    return await read(conn, tenant_id, step.notification_id), step.position
