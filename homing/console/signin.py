"""Signing in and out, and the console's front door (``GET /``).

The session cookie is HttpOnly, SameSite=Lax, Secure when the request came over HTTPS,
and lives no longer than the session's absolute end. ``next`` (where to go after
signing in) is followed only when it is a path of this site: one leading ``/``, no
second one, no backslash, no scheme, nothing but plain URL characters. Signing out
ends the session its flashes belong to, so the sign-in page says so itself, from a
fixed list (``?done=``: never a text taken from the address).
"""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import SESSION_COOKIE, FormDep, ServicesDep, SignedInDep, signed_in
from homing.console.forms import read_form
from homing.console.routing import ConsoleRoute, status_of
from homing.console.templating import render
from homing.domain.people import Membership
from homing.errors import Forbidden, InvalidRequest, RateLimited, Unauthenticated
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

MAX_NEXT = 512
_LOCAL_PATH = re.compile(r"/(?![/\\])[A-Za-z0-9/_.~%?=&+-]*")
NextQuery = Annotated[str, Query(max_length=MAX_NEXT)]
DoneQuery = Annotated[str, Query(max_length=20)]
_DONE = {
    "out": "Signed out.",
    "everywhere": "Signed out everywhere: every session of yours, on every device, has ended.",
}


def safe_next(target: str) -> str:
    """``target`` when it is a path of this site, else ``/``."""
    if len(target) <= MAX_NEXT and _LOCAL_PATH.fullmatch(target):
        return target
    return "/"


def same_origin(request: Request) -> bool:
    """A browser names the page a form came from; one from another site is refused
    (the sign-in and invitation forms have no session yet, so no session's CSRF token)."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    return origin == f"{request.url.scheme}://{request.url.netloc}"


@router.get("/")
async def home(request: Request, services: ServicesDep) -> Response:
    """The user's tenant when they have one, their list when several, the operator's
    pages for an operator with none; the sign-in page when signed out."""
    view = await signed_in(request, services)
    where = landing(view.memberships, view.user.operator)
    if where is not None:
        return RedirectResponse(where, status_code=303)
    return render(request, "home.html")


def landing(memberships: list[Membership], operator: bool) -> str | None:
    """Where ``/`` sends a signed-in user: their tenant when they have one, the
    operator's pages for an operator with none; None for the list. A change that ends
    there redirects to it directly, so its flash is not taken by ``/``'s redirect."""
    if len(memberships) == 1:
        return f"/t/{memberships[0].tenant.id}/"
    if not memberships and operator:
        return "/operator/tenants"
    return None


@router.get("/sign-in")
async def sign_in_page(request: Request, next: NextQuery = "/", done: DoneQuery = "") -> Response:
    return render(
        request, "sign_in.html", next=safe_next(next), email="", error=None, done=_DONE.get(done)
    )


@router.post("/sign-in")
async def sign_in(request: Request, services: ServicesDep) -> Response:
    form = await read_form(request)
    next_page = safe_next(form.get("next", MAX_NEXT, "/"))
    email = form.get("email", 254)
    try:
        if not same_origin(request):
            raise Forbidden("This sign-in form came from another site.")
        password = form.get("password", 256)
        client = request.client.host if request.client else "unknown"
        token = await services.people.sign_in(email, password, client)
    except (Unauthenticated, RateLimited, InvalidRequest, Forbidden) as exc:
        return render(
            request,
            "sign_in.html",
            status_of(exc),
            next=next_page,
            email=email,
            error=exc.message,
            done=None,
        )
    return signed_in_to(request, services, token, next_page)


def signed_in_to(request: Request, services: Services, token: str, target: str) -> Response:
    """A redirect to ``target`` that hands the browser its new session's cookie."""
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=services.settings.console.session_hours * 3600,
        path="/",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="lax",
    )
    return response


def _signed_out(done: str) -> Response:
    response = RedirectResponse(f"/sign-in?done={done}", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
    return response


@router.post("/sign-out")
async def sign_out(view: SignedInDep, _form: FormDep, services: ServicesDep) -> Response:
    await services.people.sign_out(view.session)
    return _signed_out("out")


@router.post("/sign-out/everywhere")
async def sign_out_everywhere(view: SignedInDep, _form: FormDep, services: ServicesDep) -> Response:
    """End every session of this user, on every device."""
    await services.people.sign_out_everywhere(view.user)
    return _signed_out("everywhere")
