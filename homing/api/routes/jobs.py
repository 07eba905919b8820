"""Reading jobs with their attempts, and retrying dead-lettered ones."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from homing.api.base_schemas import Page
from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.inbound_schemas import history
from homing.api.schemas import JobPublic, JobSummary, Queued
from homing.models import JobStatus

router = APIRouter(tags=["jobs"])


@router.get("/v1/jobs/{job_id}", response_model=JobPublic)
async def get_job(job_id: str, principal: PrincipalDep, services: ServicesDep) -> JobPublic:
    """One job and every provider call made for it. Another tenant's job is 404, and so
    is a live job to a test key."""
    job, attempts = await services.jobs.get(
        principal.tenant.id, job_id, test_only=principal.test_key
    )
    public = JobPublic.of(job, attempts)
    # What the provider reported afterwards (inbound events), forward-only.
    entries = await services.inbound.history(principal.tenant.id, job_id)
    public.delivery_status, public.events = history(entries)
    return public


@router.get("/v1/jobs", response_model=Page[JobSummary])
async def list_jobs(
    principal: PrincipalDep,
    services: ServicesDep,
    status: JobStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=36)] = None,
) -> Page[JobSummary]:
    """The tenant's jobs, newest first, paged with ``cursor`` (a test key's: test jobs)."""
    page = await services.jobs.page(
        principal.tenant.id,
        status=status,
        limit=limit,
        cursor=cursor,
        test_only=principal.test_key,
    )
    return Page[JobSummary](
        data=[
            JobSummary(
                id=j.id,
                channel=j.channel.value,
                status=j.status.value,
                provider=j.provider,
                error=j.error,
                created_at=j.created_at,
                completed_at=j.completed_at,
            )
            for j in page.jobs
        ],
        next_cursor=page.next_cursor,
    )


@router.post("/v1/jobs/{job_id}/retry", status_code=202, response_model=Queued)
async def retry_job(job_id: str, principal: PrincipalDep, services: ServicesDep) -> Queued:
    """Re-queue a FAILED job with fresh attempts; 409 in any other status. Counted like
    a new accept: in the sending rate (admission middleware) and one unit of the
    channel's quota (403 ``quota_exceeded`` when over, and the job stays FAILED)."""
    job = await services.admission.retry(principal, job_id)
    services.wakeup.notify()
    return Queued(id=job.id, status=job.status.value)
