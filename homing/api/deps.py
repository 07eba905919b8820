"""Dependencies as ``Annotated`` aliases, so route signatures document themselves."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from homing.errors import Unauthenticated
from homing.services import Services
from homing.store.tenants import Principal

_bearer = HTTPBearer(auto_error=False)


def get_services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(get_services)]


async def get_principal(
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    if credentials is None or not credentials.credentials:
        raise Unauthenticated("send an API key as 'Authorization: Bearer hk_…'")
    principal = await services.tenants.authenticate(credentials.credentials)
    if principal is None:
        raise Unauthenticated("this API key is not valid")
    return principal


PrincipalDep = Annotated[Principal, Depends(get_principal)]
