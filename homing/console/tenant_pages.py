"""A tenant's pages: the overview, messages (search, one message, retry) and the
search form's reading.

Every page is reached through the user's seat in the tenant (``access.seated``): a
tenant they hold no seat in is 404. Reads go through the stores and managers the API
uses (``GET /v1/jobs`` semantics); a change needs an owner (``posted_by_owner``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Path, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.addresses import MAX_MAILBOX, InvalidAddress, parse_mailbox
from homing.channels import Channel
from homing.clock import as_datetime, parse_moment
from homing.console.access import MemberDep, OwnerFormDep, ServicesDep, View
from homing.console.charts import daily_bars, last_days
from homing.console.flash import flash
from homing.console.message_view import content_of, timeline
from homing.console.notification_pages import WHY
from homing.console.page_params import Cursor, Short
from homing.console.routing import ConsoleRoute
from homing.console.templating import CSP, FRAMED_CSP, render
from homing.domain.job_search import JobFilter
from homing.domain.tenants import Principal
from homing.errors import InvalidRequest
from homing.inbound.events import delivery_status
from homing.models import JobStatus

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

PAGE = 50
CHART_DAYS = 14
JobId = Annotated[str, Path(min_length=1, max_length=36)]


def principal_of(view: View) -> Principal:
    """The tenant as the managers know a caller: a live (not a test) caller."""
    assert view.seat is not None
    return Principal(tenant=view.seat.tenant, api_key_id="console", test_key=False)


@router.get("/t/{tenant_id}/")
async def overview(request: Request, view: MemberDep, services: ServicesDep) -> Response:
    """Usage against quotas, volume and success by day, the latest failures."""
    assert view.seat is not None
    tenant = view.seat.tenant
    report = await services.tenant_admin.usage(tenant)
    today = as_datetime(services.clock.now())
    names = last_days(today, CHART_DAYS)
    since = parse_moment(names[0])
    bars = daily_bars(names, await services.volume.daily(tenant.id, since))
    failing = JobFilter(tenant_id=tenant.id, status=JobStatus.FAILED)
    failures = (await services.jobs.page(failing, limit=5)).jobs
    return render(
        request, "overview.html", tenant=tenant, report=report, bars=bars, failures=failures
    )


@dataclass(kw_only=True, frozen=True, slots=True)
class Search:
    """The messages page's search form, as typed (to show it again) and as a filter."""

    to: str = ""
    status: str = ""
    channel: str = ""
    since: str = ""
    until: str = ""
    idempotency_key: str = ""

    def query(self, **more: str) -> str:
        fields = {k: v for k, v in asdict(self).items() if v} | more
        return urlencode(fields)


def _moment(name: str, text: str) -> datetime | None:
    if not text:
        return None
    try:
        return parse_moment(text)
    except ValueError:
        raise InvalidRequest(f"{name}: a date like 2026-05-01 or 2026-05-01T13:30.") from None


def to_filter(tenant_id: str, search: Search) -> JobFilter:
    """The search as a JobFilter; InvalidRequest names the field it cannot read."""
    recipient = None
    if search.to:
        try:
            recipient = parse_mailbox(search.to).key
        except InvalidAddress as refused:
            raise InvalidRequest(f"Recipient: {refused}") from None
    status = JobStatus(search.status) if search.status in set(JobStatus) else None
    channel = Channel(search.channel) if search.channel in set(Channel) else None
    if (search.status and status is None) or (search.channel and channel is None):
        raise InvalidRequest("Choose a status and a channel from the lists.")
    since, until = _moment("From", search.since), _moment("Until", search.until)
    if since and until and since > until:
        raise InvalidRequest("From must not be after Until.")
    return JobFilter(
        tenant_id=tenant_id,
        address=recipient,
        channel=channel,
        status=status,
        since=since,
        until=until,
        idempotency_key=search.idempotency_key or None,
    )


@router.get("/t/{tenant_id}/messages")
async def messages(
    request: Request,
    view: MemberDep,
    services: ServicesDep,
    to: Annotated[str, Query(max_length=MAX_MAILBOX)] = "",
    status: Short = "",
    channel: Short = "",
    since: Short = "",
    until: Short = "",
    idempotency_key: Annotated[str, Query(max_length=255)] = "",
    cursor: Cursor = None,
) -> Response:
    """The tenant's messages, newest first, filtered like ``GET /v1/jobs``."""
    assert view.seat is not None
    # A status or channel in any case: the list writes statuses in lower case.
    search = Search(
        to=to.strip(),
        status=status.upper(),
        channel=channel.lower(),
        since=since,
        until=until,
        idempotency_key=idempotency_key,
    )
    problem, page = None, None
    try:
        page = await services.jobs.page(
            to_filter(view.seat.tenant.id, search), limit=PAGE, cursor=cursor
        )
    except InvalidRequest as exc:
        problem = exc.message
    return render(
        request,
        "messages.html",
        422 if problem else 200,
        search=search,
        problem=problem,
        jobs=page.jobs if page else [],
        next_query=search.query(cursor=page.next_cursor) if page and page.next_cursor else None,
        statuses=list(JobStatus),
        channels=list(Channel),
    )


@router.get("/t/{tenant_id}/messages/{job_id}")
async def message(
    request: Request, job_id: JobId, view: MemberDep, services: ServicesDep
) -> Response:
    """One message: what was sent, its attempts and provider events in one timeline
    (with the steps of the notification it is a step of), what it became."""
    assert view.seat is not None
    tenant_id = view.seat.tenant.id
    job, attempts = await services.jobs.get(tenant_id, job_id)
    entries = await services.inbound.history(tenant_id, job_id)
    status = delivery_status(e.event_type for e in entries if e.event_type is not None)
    content = content_of(job, attempts)
    notified = await services.notifications.of_job(tenant_id, job_id)
    steps = notified[0].steps if notified else ()
    return render(
        request,
        "message.html",
        csp=FRAMED_CSP if content.frame else CSP,
        job=job,
        content=content,
        timeline=timeline(attempts, entries, steps),
        delivery=status.value if status else None,
        notified=notified,
        why=WHY,
    )


@router.post("/t/{tenant_id}/messages/{job_id}/retry")
async def retry(
    job_id: JobId, view: MemberDep, _form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Re-queue a failed message, as ``POST /v1/jobs/{id}/retry`` (one quota unit)."""
    job = await services.admission.retry(principal_of(view), job_id)
    services.wakeup.notify()
    assert view.seat is not None
    await flash(services, view, "Queued again: it will be sent with fresh attempts.")
    return RedirectResponse(f"/t/{view.seat.tenant.id}/messages/{job.id}", status_code=303)
