"""The operator's search over every tenant's jobs, and the queue view, under
``/admin/v1`` (behind ``AdminGuard`` like the rest of the admin API)."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel

from homing.api.deps import ServicesDep
from homing.api.job_filters import CursorQuery, LimitQuery, job_filter, summary
from homing.api.schemas.jobs import JobSummary
from homing.api.schemas.shared import Page
from homing.domain.job_search import JobFilter

router = APIRouter(prefix="/admin/v1", tags=["admin"])


class AdminJobSummary(JobSummary):
    """A job as the operator's search lists it: with its tenant."""

    tenant_id: str


class QueueDepthPublic(BaseModel):
    """Entries of one queue and priority in one state (``waiting``, ``scheduled``,
    ``leased``, ``blocked``); ``oldest_age_seconds`` only for ``waiting``."""

    queue: str
    priority: int
    state: str
    count: int
    oldest_age_seconds: float | None


class TenantBacklogPublic(BaseModel):
    """A tenant and its claimable entries."""

    tenant_id: str
    waiting: int


class QueuesPublic(BaseModel):
    """The answer of ``GET /admin/v1/queues``."""

    depths: list[QueueDepthPublic]
    top_tenants: list[TenantBacklogPublic]


@router.get("/jobs", response_model=Page[AdminJobSummary])
async def search_jobs(
    services: ServicesDep,
    found: Annotated[JobFilter, Depends(job_filter)],
    tenant_id: Annotated[str | None, Query(min_length=1, max_length=36)] = None,
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
) -> Page[AdminJobSummary]:
    """Every tenant's jobs (or one tenant's, with ``tenant_id``), newest first, with the
    filters of ``GET /v1/jobs``."""
    page = await services.jobs.page(replace(found, tenant_id=tenant_id), limit=limit, cursor=cursor)
    return Page[AdminJobSummary](
        data=[AdminJobSummary(**summary(j).model_dump(), tenant_id=j.tenant_id) for j in page.jobs],
        next_cursor=page.next_cursor,
    )


@router.get("/queues", response_model=QueuesPublic)
async def queues(services: ServicesDep) -> QueuesPublic:
    """Queue depth per queue, priority and state, the age of the oldest claimable entry
    of each, and the top tenants by waiting entries."""
    view = await services.jobs.queues()
    return QueuesPublic(
        depths=[
            QueueDepthPublic(
                queue=d.queue,
                priority=d.priority,
                state=d.state,
                count=d.count,
                oldest_age_seconds=d.oldest_age_seconds,
            )
            for d in view.depths
        ],
        top_tenants=[
            TenantBacklogPublic(tenant_id=t.tenant_id, waiting=t.waiting) for t in view.top_tenants
        ],
    )
