"""The one place HTTP status codes meet domain errors, and the error envelope."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from homing.api.paths import routed_path
from homing.api.refusals import count_refusal
from homing.console.not_found import is_console_path, not_found_page
from homing.errors import (
    Conflict,
    EndpointRefused,
    Forbidden,
    HomingError,
    HostRefused,
    IdempotencyConflict,
    InvalidRequest,
    NotFound,
    Overloaded,
    PayloadTooLarge,
    RateLimited,
    StoreUnavailable,
    Unauthenticated,
)

_STATUS: list[tuple[type[HomingError], int]] = [
    (HostRefused, 400),
    (IdempotencyConflict, 422),
    (NotFound, 404),
    (Conflict, 409),
    (PayloadTooLarge, 413),
    (EndpointRefused, 422),
    (InvalidRequest, 422),
    (Unauthenticated, 401),
    (Forbidden, 403),
    (RateLimited, 429),
    (StoreUnavailable, 503),
    (Overloaded, 503),
]

_HTTP_CODES = {
    400: "malformed_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


class PassedOn(StarletteHTTPException):
    """A domain error raised while FastAPI reads a request body (the body cap): FastAPI
    passes only an HTTPException on to the handlers, any other becomes a 400, so the
    error travels as one and is answered as itself."""

    def __init__(self, error: HomingError) -> None:
        super().__init__(status_for(error), error.message)
        self.error = error


def envelope(
    status: int,
    code: str,
    message: str,
    details: Any = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": details or {}}}
    return JSONResponse(body, status_code=status, headers=headers)


def status_for(exc: HomingError) -> int:
    return status_of(type(exc))


def status_of(error: type[HomingError]) -> int:
    """The status an error of this class is answered with."""
    for cls, status in _STATUS:
        if issubclass(error, cls):
            return status
    return 500


def error_response(exc: HomingError) -> JSONResponse:
    """The envelope for a domain error, with the headers its status calls for."""
    status = status_for(exc)
    headers = {"Retry-After": "5"} if status == 503 else None
    if status == 401:
        headers = {"WWW-Authenticate": "Bearer"}
    if isinstance(exc, RateLimited):
        headers = {"Retry-After": str(exc.retry_after)}
    return envelope(status, exc.code, exc.message, exc.details, headers)


async def _homing_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HomingError)
    count_refusal(request.scope, exc)
    return error_response(exc)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    count_refusal(request.scope, None)
    problems = [
        {"field": ".".join(str(p) for p in err["loc"][1:]), "problem": err["msg"]}
        for err in exc.errors()
    ]
    return envelope(422, "validation_error", "the request is not valid", {"errors": problems})


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 404 and is_console_path(routed_path(request.scope)):
        # A console URL with no page: an HTML page in the console's frame.
        return await not_found_page(request)
    if isinstance(exc, PassedOn):
        count_refusal(request.scope, exc.error)
        return error_response(exc.error)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    return envelope(exc.status_code, code, str(exc.detail), headers=dict(exc.headers or {}))


def unexpected_response() -> JSONResponse:
    """The envelope for an error no handler knows: 500 ``internal_error``, no detail."""
    return envelope(500, "internal_error", "an unexpected error occurred")


async def _unexpected(_request: Request, _exc: Exception) -> JSONResponse:
    return unexpected_response()


def install(app: FastAPI) -> None:
    app.add_exception_handler(HomingError, _homing_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
