"""A tenant's webhook signing secret, its gone endpoints and its recent deliveries.

The secret is generated, rotated or deleted by ``homing.managers.webhook_secrets``, as
``/v1/webhook-secret`` does: each form answers 303 to the page, a new secret in a
flash (sealed until the page shows it, once; never in an address); afterwards only its
masked preview. After a rotation the previous secret keeps signing beside the new one
until the overlap ends, and the page says until when. A gone endpoint (one that
answered 410) is delivered to again from its row, as ``/v1/webhook-endpoints/enable``
does. The deliveries are the tenant's
webhook jobs, newest first (the job search of ``GET /v1/jobs``, by channel), each with
its latest attempt's status code, linking to its message page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.channels import Channel
from homing.console.access import MemberDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.page_params import Cursor
from homing.console.routing import ConsoleRoute
from homing.console.templating import moment, render
from homing.domain.audit import AuditEvent
from homing.domain.job_search import JobFilter
from homing.managers.audit import CHANGED
from homing.managers.webhook_secrets import IssuedSecret
from homing.models import AuditAction, Job
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

PAGE = 25
# The longest webhook URL (the API's bound).
MAX_URL = 2048


@dataclass(frozen=True, slots=True)
class Delivery:
    """One webhook job as the deliveries table shows it."""

    job: Job
    host: str
    event: str | None
    status_code: int | None
    last_tried: datetime | None


def _host(job: Job) -> str:
    try:
        return urlsplit(str(job.payload.get("url") or "")).hostname or "—"
    except ValueError:
        return "—"


async def deliveries(
    services: Services, tenant_id: str, cursor: str | None
) -> tuple[list[Delivery], str | None]:
    """A page of the tenant's webhook jobs, newest first, and the next page's cursor."""
    found = JobFilter(tenant_id=tenant_id, channel=Channel.WEBHOOK)
    page = await services.jobs.page(found, limit=PAGE, cursor=cursor)
    last = await services.jobs.last_attempts(tenant_id, [j.id for j in page.jobs])
    shown = []
    for job in page.jobs:
        attempt = last.get(job.id)
        event = job.payload.get("event_type")
        shown.append(
            Delivery(
                job,
                _host(job),
                str(event) if event else None,
                attempt.status_code if attempt else None,
                attempt.started_at if attempt else None,
            )
        )
    return shown, page.next_cursor


async def _issued(services: ServicesDep, view: View, what: str, issued: IssuedSecret) -> Response:
    """Flash the new secret and redirect to the page that shows it, once."""
    assert view.seat is not None
    said = f"Signing secret {what}. Give it to your receivers now: it is shown this once."
    if issued.previous_expires_at is not None:
        said += f" The previous secret signs beside it until {moment(issued.previous_expires_at)}."
    await flash(services, view, said, secret=issued.secret)
    return RedirectResponse(f"/t/{view.seat.tenant.id}/webhooks", status_code=303)


async def _page(
    request: Request, view: View, services: ServicesDep, cursor: str | None = None
) -> Response:
    assert view.seat is not None
    tenant_id = view.seat.tenant.id
    secret = await services.webhooks.secrets.status(tenant_id)
    gone = await services.webhooks.store.gone(tenant_id)
    sent, next_cursor = await deliveries(services, tenant_id, cursor)
    return render(
        request,
        "webhooks.html",
        secret=secret,
        gone=gone,
        deliveries=sent,
        next_cursor=next_cursor,
    )


def _event(services: ServicesDep, view: View, action: AuditAction) -> AuditEvent:
    """The event the API's twin records (``/v1/webhook-secret``), by the user."""
    assert view.seat is not None
    return services.audit.event(
        view.actor,
        action,
        tenant_id=view.seat.tenant.id,
        target_type="webhook_secret",
        changes={"secret": CHANGED},
    )


@router.get("/t/{tenant_id}/webhooks")
async def webhooks(
    request: Request, view: MemberDep, services: ServicesDep, cursor: Cursor = None
) -> Response:
    return await _page(request, view, services, cursor=cursor)


@router.post("/t/{tenant_id}/webhooks/secret")
async def generate(view: MemberDep, _form: OwnerFormDep, services: ServicesDep) -> Response:
    """Generate the first signing secret (409 when there is one: rotate it instead)."""
    assert view.seat is not None
    event = _event(services, view, AuditAction.WEBHOOK_SECRET_CREATED)
    issued = await services.webhooks.secrets.create(view.seat.tenant.id, event)
    return await _issued(services, view, "generated", issued)


@router.post("/t/{tenant_id}/webhooks/secret/rotate")
async def rotate(view: MemberDep, _form: OwnerFormDep, services: ServicesDep) -> Response:
    """A new secret, shown once; the previous one signs beside it for the overlap."""
    assert view.seat is not None
    event = _event(services, view, AuditAction.WEBHOOK_SECRET_ROTATED)
    issued = await services.webhooks.secrets.rotate(view.seat.tenant.id, event)
    return await _issued(services, view, "rotated", issued)


@router.post("/t/{tenant_id}/webhooks/secret/delete")
async def delete(view: MemberDep, _form: OwnerFormDep, services: ServicesDep) -> Response:
    """Delete the secret (and an overlapping one): deliveries go unsigned."""
    assert view.seat is not None
    event = _event(services, view, AuditAction.WEBHOOK_SECRET_DELETED)
    await services.webhooks.secrets.delete(view.seat.tenant.id, event)
    await flash(services, view, "Signing secret deleted: webhooks are sent unsigned now.")
    return RedirectResponse(f"/t/{view.seat.tenant.id}/webhooks", status_code=303)


@router.post("/t/{tenant_id}/webhooks/endpoints/enable")
async def enable_endpoint(view: MemberDep, form: OwnerFormDep, services: ServicesDep) -> Response:
    """Deliver to a gone URL again (404 when it is not marked gone), audited as the
    API's twin is: the URL without its query and fragment, where a token may ride."""
    assert view.seat is not None
    tenant_id = view.seat.tenant.id
    url = services.webhooks.normalise_url(form.get("url", MAX_URL))
    event = services.audit.event(
        view.actor,
        AuditAction.WEBHOOK_ENDPOINT_ENABLED,
        tenant_id=tenant_id,
        target_type="webhook_endpoint",
        target_id=url.split("?", 1)[0].split("#", 1)[0],
    )
    await services.webhooks.store.reenable(tenant_id, url, audit=event)
    await flash(services, view, f"Deliveries to {_host_of(url)} resume with the next webhook.")
    return RedirectResponse(f"/t/{tenant_id}/webhooks#gone", status_code=303)


def _host_of(url: str) -> str:
    try:
        return urlsplit(url).hostname or "the endpoint"
    except ValueError:
        return "the endpoint"
