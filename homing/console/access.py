"""Who is asking: the signed-in session, their seat in a tenant, and what it allows.

Dependencies as ``Annotated`` aliases, as in ``homing.api.deps``. A tenant the user is
no member of is 404, exactly like one that does not exist; a viewer asking for a change
is refused here, on the server, whatever the page showed, and so is an owner's change
to a suspended tenant (at once, from the seat just read; the store refuses it again in
the change's transaction, ``homing.store.audit.refuse_suspended_change``); an operator page is
404 to anyone else. Every POST goes through ``form`` (``homing.console.forms``), which checks
the session's CSRF token. A page (a GET) takes the session's flashes
(``homing.console.flash``) as it signs the user in: the page shows them, once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated

from fastapi import Depends, Path
from starlette.requests import Request

from homing.console.forms import Form, read_form
from homing.crypto import constant_time_equals, csrf_token
from homing.domain.people import Membership, Session, User
from homing.errors import Forbidden, NotFound
from homing.managers.flashes import Flash
from homing.managers.suspension import refuse_suspended
from homing.models import Actor, ActorKind, Role
from homing.services import Services


class SignInNeeded(Exception):
    """No live session: the browser is sent to the sign-in page (``homing.console.routing``)."""


SESSION_COOKIE = "homing_session"
VIEW_STATE = "console_view"


@dataclass(frozen=True, slots=True)
class View:
    """The signed-in user of one request, their CSRF token, their tenants, (on a
    tenant's pages) their seat in it and (on a page) the flashes it shows."""

    session: Session
    csrf: str
    memberships: list[Membership]
    seat: Membership | None = None
    flashes: tuple[Flash, ...] = ()

    @property
    def user(self) -> User:
        return self.session.user

    @property
    def owner(self) -> bool:
        return self.seat is not None and self.seat.role is Role.OWNER

    @property
    def actor(self) -> Actor:
        """The signed-in user as the audit log names who made a change."""
        return Actor(ActorKind.USER, self.user.id, self.user.email)

    def __repr__(self) -> str:
        return f"View(user={self.user!r}, seat={self.seat and self.seat.tenant.id!r})"


async def services_of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(services_of)]


async def signed_in(request: Request, services: ServicesDep) -> View:
    """The request's live session, or SignInNeeded."""
    token = request.cookies.get(SESSION_COOKIE, "")
    session = await services.people.session(token) if token else None
    if session is None:
        raise SignInNeeded()
    memberships = await services.people.memberships(session.user)
    # Only a page shows flashes: a POST leaves them for the page it redirects to.
    shown = await services.flashes.take(session.id) if request.method == "GET" else []
    view = View(session, csrf_token(token), memberships, flashes=tuple(shown))
    setattr(request.state, VIEW_STATE, view)
    return view


SignedInDep = Annotated[View, Depends(signed_in)]
TenantId = Annotated[str, Path(min_length=1, max_length=36)]


async def seated(request: Request, tenant_id: TenantId, view: SignedInDep) -> View:
    """The user's seat in ``tenant_id``; NotFound when they hold none."""
    seat = next((m for m in view.memberships if m.tenant.id == tenant_id), None)
    if seat is None:
        raise NotFound("There is no such tenant among yours.")
    view = replace(view, seat=seat)
    setattr(request.state, VIEW_STATE, view)
    return view


MemberDep = Annotated[View, Depends(seated)]


async def owner_seated(view: MemberDep) -> View:
    """The user's seat in the tenant when it is an owner's; a viewer is Forbidden."""
    if not view.owner:
        raise Forbidden("Only the tenant's owners see this page; ask an owner.")
    return view


OwnerDep = Annotated[View, Depends(owner_seated)]


async def operator(view: SignedInDep) -> View:
    if not view.user.operator:
        raise NotFound("There is no such page.")
    return view


OperatorDep = Annotated[View, Depends(operator)]


def checked(request_form: Form, view: View) -> Form:
    """``request_form`` when it carries this session's CSRF token; Forbidden otherwise."""
    if not constant_time_equals(request_form.get("csrf", 64), view.csrf):
        raise Forbidden(
            "This form has expired or came from another page. Reload the page and try again."
        )
    return request_form


async def posted(request: Request, view: SignedInDep) -> Form:
    """The posted form of a signed-in user, CSRF checked."""
    return checked(await read_form(request), view)


async def posted_by_owner(request: Request, view: MemberDep) -> Form:
    """The posted form of a tenant's owner, CSRF checked; a viewer is Forbidden, and
    anyone TenantSuspended while the tenant is suspended."""
    form = checked(await read_form(request), view)
    if not view.owner:
        raise Forbidden("Viewers can look but not change anything; ask an owner.")
    assert view.seat is not None
    refuse_suspended(view.seat.tenant)
    return form


async def posted_by_operator(request: Request, view: OperatorDep) -> Form:
    return checked(await read_form(request), view)


FormDep = Annotated[Form, Depends(posted)]
OwnerFormDep = Annotated[Form, Depends(posted_by_owner)]
OperatorFormDep = Annotated[Form, Depends(posted_by_operator)]
