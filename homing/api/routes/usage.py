"""The tenant's usage this month against its plan, and its sending rate now."""

from __future__ import annotations

from fastapi import APIRouter

from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.schemas.usage import UsagePublic
from homing.managers.plans import RATE_WINDOW_SECONDS

router = APIRouter(tags=["usage"])


@router.get("/v1/usage", response_model=UsagePublic)
async def usage(principal: PrincipalDep, services: ServicesDep) -> UsagePublic:
    """Jobs accepted this calendar month (UTC) by channel, each monthly quota with
    what is left and when it resets, and the request rate on the sending endpoints."""
    report = await services.tenant_admin.usage(principal.tenant)
    return UsagePublic.of(report, RATE_WINDOW_SECONDS)
