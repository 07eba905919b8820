"""The tenant's suppression list: addresses that are never sent to."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from homing.api.actors import actor_of
from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.error_responses import refusals
from homing.api.schemas.shared import Page
from homing.api.schemas.suppressions import SuppressionCreate, SuppressionPublic
from homing.channels import Channel
from homing.errors import NotFound, QuotaExceeded
from homing.models import AuditAction
from homing.store.suppressions import normalize_address

router = APIRouter(tags=["suppressions"])

EmailChannel = Annotated[Channel, Query(description="email (the default) or sms")]


@router.get("/v1/suppressions", response_model=Page[SuppressionPublic])
async def list_suppressions(
    principal: PrincipalDep,
    services: ServicesDep,
    channel: Channel | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=320)] = None,
) -> Page[SuppressionPublic]:
    """Suppressed addresses by address; pass ``next_cursor`` back as ``cursor``."""
    page = await services.suppressions.page(
        principal.tenant.id, channel, limit=limit, cursor=cursor
    )
    return Page[SuppressionPublic](
        data=[SuppressionPublic.of(e) for e in page.entries], next_cursor=page.next_cursor
    )


@router.post(
    "/v1/suppressions",
    status_code=201,
    response_model=SuppressionPublic,
    responses=refusals(QuotaExceeded),
)
async def add_suppression(
    body: SuppressionCreate, principal: PrincipalDep, services: ServicesDep, response: Response
) -> SuppressionPublic:
    """Suppress an address: 201, or 200 with the existing entry when it already is."""
    event = services.audit.event(
        actor_of(principal),
        AuditAction.SUPPRESSION_ADDED,
        tenant_id=principal.tenant.id,
        target_type="suppression",
        target_id=normalize_address(body.address),
        changes={"channel": body.channel, "reason": body.reason},
    )
    entry, created = await services.suppressions.add(
        principal.tenant.id, Channel(body.channel), body.address, body.reason, "api", event
    )
    if not created:
        response.status_code = 200
    return SuppressionPublic.of(entry)


@router.delete("/v1/suppressions", status_code=204, responses=refusals(NotFound))
async def remove_suppression(
    principal: PrincipalDep,
    services: ServicesDep,
    address: Annotated[str, Query(min_length=3, max_length=320)],
    channel: EmailChannel = Channel.EMAIL,
) -> Response:
    """Send to this address again; 404 when it is not suppressed."""
    event = services.audit.event(
        actor_of(principal),
        AuditAction.SUPPRESSION_REMOVED,
        tenant_id=principal.tenant.id,
        target_type="suppression",
        target_id=normalize_address(address),
        changes={"channel": channel},
    )
    await services.suppressions.remove(principal.tenant.id, channel, address, event)
    return Response(status_code=204)
