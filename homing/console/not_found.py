"""The console's answer to a URL it has no page for: an HTML 404 in the console's
frame, with the navigation of whoever is signed in.

Only paths under the console's own prefixes (``CONSOLE_PREFIXES``) get this page; any
other unknown path (``/v1/…``, ``/admin/…``, and the pages other parts of Homing add
under prefixes of their own) keeps the API's JSON problem details. The page reads the
session as every console page does, but takes none of its flashes (the next page
shows them), and names no part of the path it was asked for.
"""

from __future__ import annotations

from dataclasses import replace

from starlette.requests import Request
from starlette.responses import Response

from homing.console.access import SESSION_COOKIE, VIEW_STATE, View
from homing.console.routing import error_page
from homing.crypto import csrf_token
from homing.errors import HomingError
from homing.services import Services

__all__ = ["CONSOLE_PREFIXES", "is_console_path", "not_found_page"]

CONSOLE_PREFIXES = ("/t/", "/operator/", "/invitations/", "/sign-in/", "/sign-out/")
# The tenant id of a path /t/<id>/…: at most this long (a UUID).
_MAX_TENANT_ID = 36


def is_console_path(path: str) -> bool:
    """Whether ``path`` is under one of the console's own prefixes."""
    return path.startswith(CONSOLE_PREFIXES)


def _tenant_of(path: str) -> str | None:
    if not path.startswith("/t/"):
        return None
    tenant_id = path[3:].partition("/")[0]
    return tenant_id if 0 < len(tenant_id) <= _MAX_TENANT_ID else None


async def _view(request: Request, services: Services) -> View | None:
    """The signed-in user's view (seated in the path's tenant when they are a member
    of it), without taking their flashes; None when signed out."""
    token = request.cookies.get(SESSION_COOKIE, "")
    session = await services.people.session(token) if token else None
    if session is None:
        return None
    memberships = await services.people.memberships(session.user)
    view = View(session, csrf_token(token), memberships)
    wanted = _tenant_of(request.url.path)
    seat = next((m for m in memberships if m.tenant.id == wanted), None)
    return replace(view, seat=seat) if seat is not None else view


async def not_found_page(request: Request) -> Response:
    """The HTML 404 page, inside the console's frame."""
    services: Services = request.app.state.services
    try:
        view = await _view(request, services)
    except HomingError:
        view = None  # the page still answers, without the navigation
    if view is not None:
        setattr(request.state, VIEW_STATE, view)
    said = "There is no page at this address. Use the navigation, or go back to the start."
    return error_page(request, 404, said, "not_found")
