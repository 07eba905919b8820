"""The query string of a job search, shared by ``GET /v1/jobs`` and ``GET /admin/v1/jobs``.

Every parameter is bounded before it is looked at: ``to`` is parsed once by
``homing.addresses`` (one mailbox, linear) and compared by its key, the way jobs store
it; dates are ISO 8601 (a date without an offset is UTC); the cursor is an id.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from homing.addresses import MAX_MAILBOX, InvalidAddress, parse_mailbox
from homing.api.schemas.jobs import JobSummary
from homing.api.schemas.shared import Moment
from homing.channels import Channel
from homing.domain.job_search import JobFilter
from homing.errors import InvalidRequest
from homing.models import Job, JobStatus

# An id (a UUID in its text form): anything else is no cursor this API handed out.
CURSOR_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
CursorQuery = Annotated[str | None, Query(max_length=36, pattern=CURSOR_PATTERN)]
LimitQuery = Annotated[int, Query(ge=1, le=200)]


def _recipient(to: str | None) -> str | None:
    if to is None:
        return None
    try:
        return parse_mailbox(to).key
    except InvalidAddress as refused:
        raise InvalidRequest(f"to: {refused}", {"field": "to"}) from None


def job_filter(
    to: Annotated[str | None, Query(min_length=3, max_length=MAX_MAILBOX)] = None,
    channel: Channel | None = None,
    status: JobStatus | None = None,
    since: Moment | None = None,
    until: Moment | None = None,
    idempotency_key: Annotated[str | None, Query(min_length=1, max_length=255)] = None,
) -> JobFilter:
    """The filters of one search (FastAPI dependency); ``since`` after ``until`` and a
    ``to`` that is not exactly one mailbox are InvalidRequest. The tenant and the key's
    kind are the caller's to add."""
    if since is not None and until is not None and since > until:
        raise InvalidRequest("since must not be after until", {"field": "since"})
    return JobFilter(
        address=_recipient(to),
        channel=channel,
        status=status,
        since=since,
        until=until,
        idempotency_key=idempotency_key,
    )


def summary(job: Job) -> JobSummary:
    """A job as a search lists it."""
    return JobSummary(
        id=job.id,
        channel=job.channel.value,
        status=job.status.value,
        provider=job.provider,
        error=job.error,
        created_at=job.created_at,
        completed_at=job.completed_at,
        send_at=job.send_at,
        schedule_reason=job.schedule_reason,  # type: ignore[arg-type]
    )
