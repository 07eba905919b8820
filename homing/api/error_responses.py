"""The error envelope's schema, the catalogue of error codes per status, and the
OpenAPI responses a route declares with them.

Each route lists only the errors it can answer: its own domain refusals, declared next
to it with ``refusals(...)`` in its ``responses=``, and those it has by what it is
(authenticated, takes a body, has a path id, sits behind a guard), which
``homing.api.route_errors`` adds. Each error status is one response with the ``code``
values it may carry, in its description and in ``x-error-codes``. Declaring 422 also
replaces FastAPI's own ``HTTPValidationError`` entry, whose shape Homing never sends
(``homing.api.errors`` answers ``validation_error`` in the envelope).

``tests/unit/test_openapi.py`` checks that every ``HomingError`` code is in
``ERROR_CODES`` under the status ``homing.api.errors.status_for`` gives it, and that the
document lists every code of the catalogue somewhere (the SDK has one exception class
per code); the API tests and the fuzzing check that no route answers a code its entry
does not list.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from homing.api.errors import status_of
from homing.errors import HomingError

__all__ = [
    "ERROR_CODES",
    "ErrorInfo",
    "ErrorResponse",
    "Responses",
    "declared_codes",
    "error_response",
    "refusals",
]


class ErrorInfo(BaseModel):
    code: str = Field(description="Machine-readable; one of the codes listed per status.")
    message: str = Field(description="For people; may change between versions.")
    details: dict[str, Any] = Field(default_factory=dict)


class ErrorResponse(BaseModel):
    """Every error Homing answers: ``{"error": {"code", "message", "details"}}``."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "error": {
                        "code": "validation_error",
                        "message": "the request is not valid",
                        "details": {"errors": [{"field": "to", "problem": "Field required"}]},
                    }
                },
                {
                    "error": {
                        "code": "rate_limited",
                        "message": "Too many requests; slow down.",
                        "details": {},
                    }
                },
            ]
        }
    )

    error: ErrorInfo


# status -> the codes an error of that status may carry
ERROR_CODES: dict[int, tuple[str, ...]] = {
    400: (
        "malformed_request",
        "host_not_allowed",
    ),
    401: ("unauthenticated",),
    403: (
        "forbidden",
        "tenant_suspended",
        "quota_exceeded",
    ),
    404: ("not_found",),
    405: ("method_not_allowed",),
    409: (
        "conflict",
        "not_reschedulable",
    ),
    413: ("payload_too_large",),
    415: ("unsupported_media_type",),
    422: (
        "validation_error",
        "invalid_request",
        "idempotency_conflict",
        "invalid_credentials",
        "unknown_provider",
        "no_provider",
        "no_sender",
        "unknown_recipient",
        "recipient_unreachable",
        "unknown_category",
        "send_at_too_far",
        "public_url_required",
        "url_refused",
        "endpoint_refused",
        "provider_timeout",
        "domains_unsupported",
        "domain_not_verified",
        "provider_error",
        "template_error",
    ),
    429: ("rate_limited",),
    500: (
        "internal_error",
        "config_error",
        "store_error",
        "decryption_error",
    ),
    503: (
        "unavailable",
        "storage_full",
        "storage_read_only",
        "storage_permission_denied",
        "rate_limit_unavailable",
        "overloaded",
    ),
}

_RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}}

Responses = dict[int | str, dict[str, Any]]


def error_response(status: int, codes: Iterable[str]) -> dict[str, Any]:
    """The OpenAPI response of one error status that carries ``codes``, in the
    catalogue's order (``ERROR_CODES``)."""
    wanted = set(codes)
    unknown = wanted - set(ERROR_CODES.get(status, ()))
    assert not unknown, f"not in ERROR_CODES under {status}: {sorted(unknown)}"
    ordered = [code for code in ERROR_CODES[status] if code in wanted]
    listed = ", ".join(f"`{code}`" for code in ordered)
    response: dict[str, Any] = {
        "model": ErrorResponse,
        "description": f"Error; `code` is one of {listed}.",
        # Machine-readable for generators (an OpenAPI extension, allowed on a response).
        "x-error-codes": ordered,
    }
    if status in (429, 503):
        response["headers"] = _RETRY_AFTER
    return response


def refusals(*errors: type[HomingError] | str) -> Responses:
    """A route's own refusals, for its ``responses=``: each domain error it can raise,
    under the status it is answered with (``homing.api.errors.status_of``), or the code
    of one raised in a layer the API may not import (its status read from
    ``ERROR_CODES``). What every route of its kind answers (authentication, validation,
    the guards) is added by ``homing.api.route_errors``."""
    found: dict[int, list[str]] = {}
    for error in errors:
        if isinstance(error, str):
            [status] = [s for s, codes in ERROR_CODES.items() if error in codes]
            found.setdefault(status, []).append(error)
        else:
            found.setdefault(status_of(error), []).append(error.code)
    return {status: error_response(status, codes) for status, codes in found.items()}


def declared_codes(responses: Responses) -> set[tuple[int, str]]:
    """The (status, code) pairs a ``responses`` map lists in its ``x-error-codes``."""
    return {
        (int(status), code)
        for status, response in responses.items()
        for code in response.get("x-error-codes", ())
    }
