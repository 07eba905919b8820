"""How console routes answer: every error becomes a page, and every page carries the
security headers (``homing.console.templating``).

``ConsoleRoute`` wraps each route's handler. A request without a live session is sent
to the sign-in page with where it was going (``SignInNeeded``); a domain error becomes
an error page whose status is the console's mapping of the error tree (the HTML face
of what ``homing/api/errors.py`` is for the JSON API); a form or address FastAPI
cannot read is a 422 page. Nothing of the request is echoed but the error's message.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import quote

from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import Scope

from homing.console.access import SignInNeeded
from homing.console.templating import SECURITY_HEADERS, render
from homing.errors import (
    Conflict,
    Forbidden,
    HomingError,
    HostRefused,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    StoreUnavailable,
    Unauthenticated,
)

_STATUS: list[tuple[type[HomingError], int]] = [
    (HostRefused, 400),
    (NotFound, 404),
    (Conflict, 409),
    (PayloadTooLarge, 413),
    (InvalidRequest, 422),
    (Unauthenticated, 401),
    (Forbidden, 403),
    (RateLimited, 429),
    (StoreUnavailable, 503),
]
_TITLES = {
    400: "Wrong address",
    401: "Not signed in",
    403: "Not allowed",
    404: "Not found",
    409: "Not possible now",
    413: "Too large",
    422: "Not understood",
    429: "Too many attempts",
    503: "Unavailable",
}


def status_of(exc: HomingError) -> int:
    return next((status for cls, status in _STATUS if isinstance(exc, cls)), 500)


def error_page(request: Request, status: int, message: str, code: str | None = None) -> Response:
    """The error page: a title for ``status``, the message, and the error's ``code``
    (the API's ``error.code``, e.g. ``tenant_suspended``) as a data attribute."""
    title = _TITLES.get(status, "Something went wrong")
    return render(request, "error.html", status, title=title, message=message, code=code)


def refusal_page(scope: Scope, exc: HomingError) -> Response:
    """The error page of a refusal made before any route ran (``api.host_guard``)."""
    return error_page(Request(scope), status_of(exc), exc.message)


def to_sign_in(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    response = RedirectResponse("/sign-in?next=" + quote(target, safe="/"), status_code=303)
    response.headers.update(SECURITY_HEADERS)
    return response


class ConsoleRoute(APIRoute):
    """An APIRoute whose errors are pages and whose responses carry the console's
    security headers."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def page(request: Request) -> Response:
            try:
                response = await handler(request)
            except SignInNeeded:
                return to_sign_in(request)
            except HomingError as exc:
                return error_page(request, status_of(exc), exc.message, exc.code)
            except RequestValidationError:
                return error_page(request, 422, "That address or form was not understood.")
            except HTTPException as exc:
                return error_page(request, exc.status_code, str(exc.detail))
            for name, value in SECURITY_HEADERS.items():
                response.headers.setdefault(name, value)
            return response

        return page
