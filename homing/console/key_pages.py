"""A tenant's API keys: the list (prefix, name, created, last used), create, revoke.

A new key is shown once, on the page that answers the form (never stored in clear,
never in a redirect's address, and that page is not cached); the list shows prefixes.
The tenant's last live key cannot be revoked (the store refuses: 409).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import MemberDep, OwnerFormDep, ServicesDep, View
from homing.console.routing import ConsoleRoute
from homing.console.templating import render
from homing.errors import InvalidRequest
from homing.models import AuditAction

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

MAX_NAME = 200
KeyId = Annotated[str, Path(min_length=1, max_length=36)]


async def _page(
    request: Request, view: View, services: ServicesDep, issued: str | None = None
) -> Response:
    assert view.seat is not None
    keys = await services.keys.live(view.seat.tenant.id)
    return render(request, "api_keys.html", keys=keys, issued=issued)


@router.get("/t/{tenant_id}/api-keys")
async def api_keys(request: Request, view: MemberDep, services: ServicesDep) -> Response:
    return await _page(request, view, services)


@router.post("/t/{tenant_id}/api-keys")
async def create(
    request: Request, view: MemberDep, form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Issue a live key named by the form; the answer shows it, once."""
    assert view.seat is not None
    name = form.get("name", MAX_NAME).strip()
    if not name:
        raise InvalidRequest("Name the key, so you can tell it from the others later.")
    tenant_id = view.seat.tenant.id
    event = services.audit.event(
        view.actor,
        AuditAction.API_KEY_ISSUED,
        tenant_id=tenant_id,
        target_type="api_key",
        changes={"name": name, "test": False},
    )
    _, key = await services.keys.issue(tenant_id, name, audit=event)
    return await _page(request, view, services, issued=key)


@router.post("/t/{tenant_id}/api-keys/{key_id}/revoke")
async def revoke(
    key_id: KeyId, view: MemberDep, _form: OwnerFormDep, services: ServicesDep
) -> Response:
    assert view.seat is not None
    event = services.audit.event(
        view.actor,
        AuditAction.API_KEY_REVOKED,
        tenant_id=view.seat.tenant.id,
        target_type="api_key",
        target_id=key_id,
    )
    await services.keys.revoke(view.seat.tenant.id, key_id, audit=event)
    services.admission.forget_key(key_id)
    return RedirectResponse(f"/t/{view.seat.tenant.id}/api-keys", status_code=303)
