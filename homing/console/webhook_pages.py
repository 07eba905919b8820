"""A tenant's webhook signing secret and its gone endpoints.

The secret is generated, rotated or deleted by ``homing.managers.webhook_secrets``, as
``/v1/webhook-secret`` does: a new secret is shown once, on the page that answers the
form (not cached, never in an address); afterwards only its masked preview. After a
rotation the previous secret keeps signing beside the new one until the overlap ends,
and the page says until when.
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import MemberDep, OwnerFormDep, ServicesDep, View
from homing.console.routing import ConsoleRoute
from homing.console.templating import render
from homing.managers.audit import CHANGED
from homing.managers.webhook_secrets import IssuedSecret
from homing.models import AuditAction
from homing.store.audit import AuditEvent

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)


async def _page(
    request: Request, view: View, services: ServicesDep, issued: IssuedSecret | None = None
) -> Response:
    assert view.seat is not None
    tenant_id = view.seat.tenant.id
    secret = await services.webhooks.secrets.status(tenant_id)
    gone = await services.webhooks.store.gone(tenant_id)
    return render(request, "webhooks.html", secret=secret, gone=gone, issued=issued)


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
async def webhooks(request: Request, view: MemberDep, services: ServicesDep) -> Response:
    return await _page(request, view, services)


@router.post("/t/{tenant_id}/webhooks/secret")
async def generate(
    request: Request, view: MemberDep, _form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Generate the first signing secret (409 when there is one: rotate it instead)."""
    assert view.seat is not None
    event = _event(services, view, AuditAction.WEBHOOK_SECRET_CREATED)
    issued = await services.webhooks.secrets.create(view.seat.tenant.id, event)
    return await _page(request, view, services, issued)


@router.post("/t/{tenant_id}/webhooks/secret/rotate")
async def rotate(
    request: Request, view: MemberDep, _form: OwnerFormDep, services: ServicesDep
) -> Response:
    """A new secret, shown once; the previous one signs beside it for the overlap."""
    assert view.seat is not None
    event = _event(services, view, AuditAction.WEBHOOK_SECRET_ROTATED)
    issued = await services.webhooks.secrets.rotate(view.seat.tenant.id, event)
    return await _page(request, view, services, issued)


@router.post("/t/{tenant_id}/webhooks/secret/delete")
async def delete(view: MemberDep, _form: OwnerFormDep, services: ServicesDep) -> Response:
    """Delete the secret (and an overlapping one): deliveries go unsigned."""
    assert view.seat is not None
    event = _event(services, view, AuditAction.WEBHOOK_SECRET_DELETED)
    await services.webhooks.secrets.delete(view.seat.tenant.id, event)
    return RedirectResponse(f"/t/{view.seat.tenant.id}/webhooks", status_code=303)
