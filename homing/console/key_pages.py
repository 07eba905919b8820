"""A tenant's API keys: the list (prefix, name, created, last used), create, revoke.

Creating a key answers 303 to the list with the new key in a flash (sealed until the
list shows it, once: ``homing.console.flash``), never in an address or stored in
clear; a reload shows only prefixes. The tenant's last live key cannot be revoked (the
store refuses: 409), and a tenant holding ``HOMING_MAX_API_KEYS_PER_TENANT`` live keys
is shown the form again with why (403).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import MemberDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.routing import ConsoleRoute, status_of
from homing.console.templating import render
from homing.errors import QuotaExceeded
from homing.models import AuditAction
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

MAX_NAME = 200
KeyId = Annotated[str, Path(min_length=1, max_length=36)]


async def _page(
    request: Request,
    view: View,
    services: Services,
    typed: str = "",
    problem: str | None = None,
    status: int | None = None,
) -> Response:
    assert view.seat is not None
    keys = await services.keys.live(view.seat.tenant.id)
    status = status or (422 if problem else 200)
    return render(request, "api_keys.html", status, keys=keys, typed=typed, problem=problem)


@router.get("/t/{tenant_id}/api-keys")
async def api_keys(request: Request, view: MemberDep, services: ServicesDep) -> Response:
    return await _page(request, view, services)


@router.post("/t/{tenant_id}/api-keys")
async def create(
    request: Request, view: MemberDep, form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Issue a live key named by the form; the list it redirects to shows it, once. A
    name that will not do shows the form again, with the name typed and why."""
    assert view.seat is not None
    typed = form.get("name", MAX_NAME * 4)
    name = typed.strip()
    if not name or len(name) > MAX_NAME:
        problem = (
            f"At most {MAX_NAME} characters, please."
            if name
            else "Name the key, so you can tell it from the others later."
        )
        return await _page(request, view, services, typed[: MAX_NAME * 4], problem)
    tenant_id = view.seat.tenant.id
    event = services.audit.event(
        view.actor,
        AuditAction.API_KEY_ISSUED,
        tenant_id=tenant_id,
        target_type="api_key",
        changes={"name": name, "test": False},
    )
    try:
        _, key = await services.keys.issue(tenant_id, name, audit=event)
    except QuotaExceeded as exc:
        problem = f"{exc.message[:1].upper()}{exc.message[1:]}: revoke one to make room."
        return await _page(request, view, services, typed, problem, status_of(exc))
    said = f"API key “{name}” created. Copy it now: it is shown this once."
    await flash(services, view, said, secret=key)
    return RedirectResponse(f"/t/{tenant_id}/api-keys", status_code=303)


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
    await flash(services, view, "API key revoked: requests made with it are refused now.")
    return RedirectResponse(f"/t/{view.seat.tenant.id}/api-keys", status_code=303)
