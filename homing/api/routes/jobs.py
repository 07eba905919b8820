"""Reading jobs with their attempts, and retrying dead-lettered ones."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Depends, Request

from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.error_responses import refusals
from homing.api.job_filters import CursorQuery, LimitQuery, job_filter, summary
from homing.api.middleware.sending_gate import RATE_STATE
from homing.api.schemas.delivery_events import history
from homing.api.schemas.email import Queued
from homing.api.schemas.jobs import JobPublic, JobReschedule, JobSummary
from homing.api.schemas.shared import Page
from homing.domain.job_search import JobFilter
from homing.errors import Conflict, NotReschedulable, QuotaExceeded, SendAtTooFar
from homing.metrics import JOBS_FINISHED

# The status label of homing_jobs_finished_total for a job a tenant withdrew.
CANCELLED = "cancelled"

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
    found: Annotated[JobFilter, Depends(job_filter)],
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
) -> Page[JobSummary]:
    """The tenant's jobs, newest first, paged with ``cursor`` (a test key's: test jobs),
    filtered by ``to``, ``channel``, ``status``, ``since``/``until`` (on ``created_at``)
    and ``idempotency_key``, all of which must match."""
    mine = replace(found, tenant_id=principal.tenant.id, test_only=principal.test_key)
    page = await services.jobs.page(mine, limit=limit, cursor=cursor)
    return Page[JobSummary](data=[summary(j) for j in page.jobs], next_cursor=page.next_cursor)


@router.post(
    "/v1/jobs/{job_id}/retry",
    status_code=202,
    response_model=Queued,
    responses=refusals(Conflict, QuotaExceeded),
)
async def retry_job(
    job_id: str, request: Request, principal: PrincipalDep, services: ServicesDep
) -> Queued:
    """Re-queue a FAILED job with fresh attempts; 409 in any other status. Counted like
    a new accept: in the sending rate (once: the admission middleware took it) and one
    unit of the channel's quota (403 ``quota_exceeded`` when over, and the job stays
    FAILED)."""
    rate = getattr(request.state, RATE_STATE, None)
    job = await services.admission.retry(principal, job_id, rate=rate)
    services.wakeup.notify()
    return Queued(id=job.id, status=job.status.value)


@router.post("/v1/jobs/{job_id}/cancel", response_model=JobSummary, responses=refusals(Conflict))
async def cancel_job(job_id: str, principal: PrincipalDep, services: ServicesDep) -> JobSummary:
    """Withdraw a job no worker holds: a PENDING job becomes CANCELLED and is never sent.
    409 ``conflict`` when a worker holds it or it already ended (twice is 409 too);
    another tenant's job is 404; a test key cancels only test jobs."""
    job = await services.jobs.cancel(principal.tenant.id, job_id, test_only=principal.test_key)
    JOBS_FINISHED.labels(job.channel.value, CANCELLED).inc()
    return summary(job)


@router.patch(
    "/v1/jobs/{job_id}",
    response_model=JobSummary,
    responses=refusals(NotReschedulable, SendAtTooFar),
)
async def reschedule_job(
    job_id: str, body: JobReschedule, principal: PrincipalDep, services: ServicesDep
) -> JobSummary:
    """Move a PENDING job no worker has claimed to ``send_at`` (docs/scheduling.md): its
    ttl moves with it, and quiet hours are not applied again. 409 ``not_reschedulable``
    when a worker claimed it, it ended or it has an ordering key; 422
    ``send_at_too_far`` past 30 days; another tenant's job is 404; a test key
    reschedules only test jobs."""
    job = await services.scheduler.reschedule(
        principal.tenant.id, job_id, body.send_at, test_only=principal.test_key
    )
    services.wakeup.notify()
    return summary(job)
