"""Dependencies as ``Annotated`` aliases, so route signatures document themselves."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from homing.api.key_scope import check_key_scope
from homing.api.middleware.sending_gate import PRINCIPAL_STATE, principal_for
from homing.domain.tenants import Principal
from homing.errors import (
    Forbidden,
    HomingError,
    IdempotencyConflict,
    NoProvider,
    QuotaExceeded,
    RecipientUnreachable,
    SendAtTooFar,
    UnknownCategory,
    UnknownProvider,
    UnknownRecipient,
)
from homing.rendering.kernel import TemplateError
from homing.services import Services

_bearer = HTTPBearer(auto_error=False)


async def get_services(request: Request) -> Services:
    # async: FastAPI runs a plain ``def`` dependency in a worker thread, per request.
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(get_services)]


async def get_principal(
    request: Request,
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The caller, authenticated once per request (the sending endpoints' admission
    middleware may have done it already); a suspended tenant is 403, and so is a test
    key on a route it may not use (``homing.api.key_scope``)."""
    principal: Principal | None = getattr(request.state, PRINCIPAL_STATE, None)
    if principal is None:
        header = f"Bearer {credentials.credentials}" if credentials is not None else None
        principal = await principal_for(services.admission, header)
    check_key_scope(principal, request)
    return principal


PrincipalDep = Annotated[Principal, Depends(get_principal)]


async def get_live_principal(principal: PrincipalDep) -> Principal:
    """The caller, when it used a live key: a test key cannot manage keys. (Redundant
    with ``check_key_scope``, which refuses a test key off its list; kept so that the
    key routes say so in their signatures.)"""
    if principal.test_key:
        raise Forbidden("a test API key touches test state only; this needs a live API key")
    return principal


LivePrincipalDep = Annotated[Principal, Depends(get_live_principal)]


def sending(request: Request) -> tuple[Principal, Services]:
    """The caller of ``POST /v1/notifications/…``, which the admission middleware has
    authenticated already, and the services. Those routes take the ``Request`` and call
    this rather than depend on PrincipalDep: solving a dependency tree is a measurable
    share of an accept."""
    principal: Principal = getattr(request.state, PRINCIPAL_STATE)
    check_key_scope(principal, request)
    return principal, request.app.state.services


# What a sending route declares so that its OpenAPI entry still names the bearer key.
SENDING_OPENAPI: dict[str, Any] = {"security": [{"HTTPBearer": []}]}

# The refusals every single send on a provider's channel (email, SMS, chat) can answer,
# for its ``responses=refusals(*SEND_REFUSALS, …)``; a channel adds its own.
SEND_REFUSALS: tuple[type[HomingError], ...] = (
    IdempotencyConflict,
    QuotaExceeded,
    NoProvider,
    UnknownProvider,
    UnknownRecipient,
    RecipientUnreachable,
    UnknownCategory,
    SendAtTooFar,
    TemplateError,
)
