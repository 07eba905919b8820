"""The error responses every route's OpenAPI entry declares: each status Homing answers
with an error envelope and the ``code`` values it may carry (in the description and
in ``x-error-codes``).

``create_app`` hands ``ERROR_RESPONSES`` to FastAPI once, so every route lists them (a
route that cannot produce one of them still lists it: the map is shared, not per route).
Declaring 422 also replaces FastAPI's own ``HTTPValidationError`` entry, whose shape
Homing never sends (``homing.api.errors`` answers ``validation_error`` in the envelope).
``tests/unit/test_openapi.py`` checks that every ``HomingError`` code is listed under the
status ``homing.api.errors.status_for`` gives it, and that the SDK has one exception
class per code listed here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ERROR_CODES", "ERROR_RESPONSES", "ErrorInfo", "ErrorResponse"]


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
    409: ("conflict",),
    413: ("payload_too_large",),
    415: ("unsupported_media_type",),
    422: (
        "validation_error",
        "invalid_request",
        "idempotency_conflict",
        "invalid_credentials",
        "unknown_provider",
        "unknown_recipient",
        "recipient_unreachable",
        "unknown_category",
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
        "rate_limit_unavailable",
    ),
}

_RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}}


def _response(status: int, codes: tuple[str, ...]) -> dict[str, Any]:
    listed = ", ".join(f"`{code}`" for code in codes)
    response: dict[str, Any] = {
        "model": ErrorResponse,
        "description": f"Error; `code` is one of {listed}.",
        # Machine-readable for generators (an OpenAPI extension, allowed on a response).
        "x-error-codes": list(codes),
    }
    if status in (429, 503):
        response["headers"] = _RETRY_AFTER
    return response


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: _response(status, codes) for status, codes in ERROR_CODES.items()
}
