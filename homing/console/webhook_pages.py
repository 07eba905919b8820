"""A tenant's webhook signing secret and its gone endpoints.

The secret is generated, rotated or deleted by ``homing.managers.webhook_secrets``, as
``/v1/webhook-secret`` does: each form answers 303 to the page, a new secret in a
flash (sealed until the page shows it, once; never in an address); afterwards only its
masked preview. After a rotation the previous secret keeps signing beside the new one
until the overlap ends, and the page says until when.
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import MemberDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.routing import ConsoleRoute
from homing.console.templating import moment, render
from homing.managers.audit import CHANGED
from homing.managers.webhook_secrets import IssuedSecret
from homing.models import AuditAction
from homing.store.audit import AuditEvent

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)


async def _issued(services: ServicesDep, view: View, what: str, issued: IssuedSecret) -> Response:
    """Flash the new secret and redirect to the page that shows it, once."""
    assert view.seat is not None
    said = f"Signing secret {what}. Give it to your receivers now: it is shown this once."
    if issued.previous_expires_at is not None:
        said += f" The previous secret signs beside it until {moment(issued.previous_expires_at)}."
    await flash(services, view, said, secret=issued.secret)
    return RedirectResponse(f"/t/{view.seat.tenant.id}/webhooks", status_code=303)


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
    assert view.seat is not None
    tenant_id = view.seat.tenant.id
    secret = await services.webhooks.secrets.status(tenant_id)
    gone = await services.webhooks.store.gone(tenant_id)
    return render(request, "webhooks.html", secret=secret, gone=gone)


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
