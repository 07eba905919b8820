"""The errors a route answers by what it is, added to its own in its OpenAPI entry.

A route declares its domain refusals next to it (``refusals(...)`` in its
``responses=``, ``homing.api.error_responses``); what it has in common with others of
its kind is derived here from the route itself, so that it cannot drift from the code:

- every route: 500 (an unexpected error, the database, the configuration, a sealed
  secret) and 503 ``unavailable`` (the database cannot be reached) and the storage
  codes (``storage_full``, ``storage_read_only``, ``storage_permission_denied``: the
  database cannot write, ``homing.store.storage``);
- behind the host guard (``/v1/``, ``/admin/``, ``/inbound/``): 400 ``host_not_allowed``;
- behind the admin guard (``/admin/``): 401 ``unauthenticated``, and 404 ``not_found``
  while no admin token is set;
- behind the sending gate (``homing.api.middleware.sending_gate``): 401, 403
  ``forbidden`` (a test key off its routes) and ``tenant_suspended``, 429
  ``rate_limited`` and 503 ``rate_limit_unavailable``;
- authenticated by API key (``homing.api.deps.get_principal``): 401, 403 ``forbidden``
  and ``tenant_suspended``;
- any parameter: 422 ``validation_error``, and ``invalid_request`` for a value the
  database cannot store or compare (``UnstorableValue``: a NUL character);
- a JSON body: 400 ``malformed_request`` (a body that cannot be read) and 413
  ``payload_too_large``; a path parameter: 404 ``not_found``;
- a route that declares 429 ``rate_limited``: 503 ``rate_limit_unavailable`` too, as
  the rate limiter fails closed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from homing.api.deps import get_principal
from homing.api.error_responses import (
    ERROR_CODES,
    Responses,
    declared_codes,
    error_response,
)
from homing.api.middleware.admin_guard import ADMIN_PREFIX
from homing.api.middleware.host_guard import guards_path
from homing.api.middleware.sending_gate import is_sending
from homing.errors import UnstorableValue

__all__ = ["UNROUTED", "document_errors", "route_errors", "with_unrouted_errors"]

Pairs = set[tuple[int, str]]

_STORAGE = ("unavailable", "storage_full", "storage_read_only", "storage_permission_denied")
_EVERY_ROUTE: Pairs = {(500, code) for code in ERROR_CODES[500]} | {(503, c) for c in _STORAGE}
_KEY: Pairs = {(401, "unauthenticated"), (403, "forbidden"), (403, "tenant_suspended")}
_SENDING: Pairs = _KEY | {(429, "rate_limited"), (503, "rate_limit_unavailable")}
_ADMIN: Pairs = {(401, "unauthenticated"), (404, "not_found")}
_BODY: Pairs = {(400, "malformed_request"), (413, "payload_too_large")}


def document_errors(router: APIRouter) -> APIRouter:
    """``router``, each of its documented routes' error responses made whole
    (``route_errors``); done before the router is included, so the inclusion builds
    the response models from them. Idempotent."""
    for route in router.routes:
        if isinstance(route, APIRoute) and route.include_in_schema:
            route.responses = route_errors(route)
    return router


def route_errors(route: APIRoute) -> Responses:
    """The route's ``responses`` with its error statuses: its own declared codes and
    those it has by what it is, one response per status."""
    pairs = declared_codes(route.responses) | _derived(route)
    if (429, "rate_limited") in pairs:
        pairs.add((503, "rate_limit_unavailable"))
    others = {k: v for k, v in route.responses.items() if "x-error-codes" not in v}
    errors: Responses = {
        status: error_response(status, (code for s, code in pairs if s == status))
        for status in sorted({status for status, _ in pairs})
    }
    return {**others, **errors}


def _derived(route: APIRoute) -> Pairs:
    pairs = set(_EVERY_ROUTE)
    methods = route.methods or set()
    if guards_path(route.path):
        pairs.add((400, "host_not_allowed"))
    if route.path.startswith(ADMIN_PREFIX):
        pairs |= _ADMIN
    if any(is_sending(method, route.path) for method in methods):
        pairs |= _SENDING
    dependants = list(_walk(route.dependant))
    if any(d.call is get_principal for d in dependants):
        pairs |= _KEY
    if any(
        d.path_params or d.query_params or d.header_params or d.cookie_params or d.body_params
        for d in dependants
    ):
        pairs |= {(422, "validation_error"), (422, UnstorableValue.code)}
    # A route that reads its body itself declares it in ``openapi_extra``.
    body = any(d.body_params for d in dependants) or "requestBody" in (route.openapi_extra or {})
    if body:
        pairs |= _BODY | {(422, "validation_error"), (422, UnstorableValue.code)}
    if any(d.path_params for d in dependants):
        pairs.add((404, "not_found"))
    return pairs


def _walk(dependant: Dependant) -> Iterator[Dependant]:
    """The route's dependant and every dependency under it."""
    yield dependant
    for dependency in dependant.dependencies:
        yield from _walk(dependency)


# Answers that belong to no operation, listed once in ``components.responses`` so the
# document still names every code of the catalogue (the SDKs have a class for each).
UNROUTED: dict[str, tuple[int, str, str]] = {
    "MethodNotAllowed": (
        405,
        "method_not_allowed",
        "A method the path does not have; no operation answers it.",
    ),
    "UnsupportedMediaType": (
        415,
        "unsupported_media_type",
        "Reserved: this version answers a body that is not JSON with 422"
        " `validation_error`, so no operation answers it.",
    ),
}


def with_unrouted_errors(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with the ``UNROUTED`` responses in its components, each with its
    status in ``x-error-status`` (a component response has no status of its own)."""
    responses = document.setdefault("components", {}).setdefault("responses", {})
    for name, (status, code, description) in UNROUTED.items():
        schema = {"$ref": "#/components/schemas/ErrorResponse"}
        responses[name] = {
            "description": f"{status}: {description}",
            "x-error-status": status,
            "x-error-codes": [code],
            "content": {"application/json": {"schema": schema}},
        }
    return document
