"""A tenant's users, for its owners: members (role, since), pending invitations, the
invite form, a member's role changed, a member removed.

An invitation's link goes by platform email when the operator configured it; otherwise
it is shown once, on the page that answers the form (not cached, never in an address),
for the owner to pass on (``homing.managers.invitations``). A tenant keeps at least one
owner: demoting or removing the last is refused (409). A removed member's next request
to the tenant is 404, like a tenant that does not exist (``access.seated`` reads the
memberships on every request). Each change answers 303 with a flash saying what was
done; an owner who leaves goes where ``/`` would send them (``signin.landing``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import OwnerDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.routing import ConsoleRoute, status_of
from homing.console.signin import landing
from homing.console.templating import render
from homing.errors import Conflict, InvalidRequest, RateLimited
from homing.managers.invitations import Invited, role_of
from homing.managers.people import MAX_EMAIL
from homing.models import AuditAction
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

PAGE = 50
UserId = Annotated[str, Path(min_length=1, max_length=36)]
InvitationId = Annotated[str, Path(min_length=1, max_length=36)]
After = Annotated[str | None, Query(max_length=MAX_EMAIL)]


def link_base(request: Request, services: Services) -> str:
    """Where links to this console start: HOMING_PUBLIC_URL, else this request's site."""
    return services.settings.public_url or f"{request.url.scheme}://{request.url.netloc}"


def _tenant_id(view: View) -> str:
    assert view.seat is not None
    return view.seat.tenant.id


async def _page(
    request: Request,
    view: View,
    services: Services,
    *,
    after: str | None = None,
    error: str | None = None,
    status: int = 200,
) -> Response:
    tenant_id = _tenant_id(view)
    members, last = await services.members.page(tenant_id, limit=PAGE, after=after)
    return render(
        request,
        "users.html",
        status,
        members=members,
        next_after=last,
        invitations=await services.invitations.pending(tenant_id),
        error=error,
        ttl_hours=services.settings.console.invitation_ttl_hours,
    )


@router.get("/t/{tenant_id}/users")
async def users(
    request: Request, view: OwnerDep, services: ServicesDep, after: After = None
) -> Response:
    return await _page(request, view, services, after=after)


@router.post("/t/{tenant_id}/users/invite")
async def invite(
    request: Request, view: OwnerDep, form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Invite an email with a role; the page the answer redirects to shows the link
    once (a flash, sealed until shown), unless it was mailed."""
    assert view.seat is not None
    tenant = view.seat.tenant
    try:
        email = form.get("email", MAX_EMAIL)
        role = role_of(form.get("role", 10))
        invited = await services.invitations.invite(
            tenant.id, tenant.name, email, role, view.actor, link_base(request, services)
        )
    except (InvalidRequest, Conflict, RateLimited) as exc:
        return await _page(request, view, services, error=exc.message, status=status_of(exc))
    await _say_invited(services, view, invited)
    return RedirectResponse(f"/t/{tenant.id}/users", status_code=303)


async def _say_invited(services: Services, view: View, invited: Invited) -> None:
    """The flash that says so (the address last: a flash is capped, a long one is cut)."""
    hours = services.settings.console.invitation_ttl_hours
    if invited.mailed:
        said = f"Invitation sent by email; it can be accepted for {hours} hours. To: "
        await flash(services, view, said + invited.email)
        return
    said = (
        f"The invitation link, shown this once: send it yourself; it can be accepted once, "
        f"for {hours} hours (Homing keeps only its hash). For: {invited.email}"
    )
    await flash(services, view, said, secret=invited.link)


@router.post("/t/{tenant_id}/invitations/{invitation_id}/revoke")
async def revoke(
    invitation_id: InvitationId, view: OwnerDep, _form: OwnerFormDep, services: ServicesDep
) -> Response:
    tenant_id = _tenant_id(view)
    await services.invitations.revoke(tenant_id, invitation_id, view.actor)
    await flash(services, view, "Invitation revoked: its link no longer works.")
    return RedirectResponse(f"/t/{tenant_id}/users", status_code=303)


@router.post("/t/{tenant_id}/users/{user_id}/role")
async def change_role(
    user_id: UserId, view: OwnerDep, form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Make a member an owner or a viewer (never the tenant's last owner a viewer)."""
    tenant_id = _tenant_id(view)
    role = role_of(form.get("role", 10))
    email, held = await services.members.email_of(tenant_id, user_id)
    event = services.audit.event(
        view.actor,
        AuditAction.MEMBER_ROLE_CHANGED,
        tenant_id=tenant_id,
        target_type="member",
        target_id=user_id,
        changes={"email": email, "role": {"from": held.value, "to": role.value}},
    )
    await services.members.change_role(tenant_id, user_id, role, event)
    await flash(services, view, f"Role changed to {role.value}: {email}")
    return RedirectResponse(f"/t/{tenant_id}/users", status_code=303)


@router.post("/t/{tenant_id}/users/{user_id}/remove")
async def remove(
    user_id: UserId, view: OwnerDep, _form: OwnerFormDep, services: ServicesDep
) -> Response:
    """End a membership at once (never the tenant's last owner's)."""
    tenant_id = _tenant_id(view)
    email, held = await services.members.email_of(tenant_id, user_id)
    event = services.audit.event(
        view.actor,
        AuditAction.MEMBER_REMOVED,
        tenant_id=tenant_id,
        target_type="member",
        target_id=user_id,
        changes={"email": email, "role": held.value},
    )
    await services.members.remove(tenant_id, user_id, event)
    if user_id != view.user.id:
        await flash(services, view, f"Removed from the tenant: {email}")
        return RedirectResponse(f"/t/{tenant_id}/users", status_code=303)
    assert view.seat is not None
    await flash(services, view, f"You left {view.seat.tenant.name}.")
    left = [m for m in view.memberships if m.tenant.id != tenant_id]
    return RedirectResponse(landing(left, view.user.operator) or "/", status_code=303)
