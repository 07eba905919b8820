"""Each provider account's inbound secret: set (checked, sealed), read (masked), remove."""

from __future__ import annotations

from fastapi import APIRouter, Response

from homing.api.actors import actor_of
from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.schemas.inbound_secrets import InboundSecretPublic, InboundSecretPut
from homing.managers.audit import CHANGED
from homing.models import AuditAction

router = APIRouter(tags=["providers"])


@router.put("/v1/providers/{provider_id}/inbound", response_model=InboundSecretPublic)
async def put_inbound_secret(
    provider_id: str, body: InboundSecretPut, principal: PrincipalDep, services: ServicesDep
) -> InboundSecretPublic:
    """Set the secret that verifies this provider's events; ``path`` is where to post them."""
    event = services.audit.event(
        actor_of(principal),
        AuditAction.INBOUND_SECRET_ROTATED,
        tenant_id=principal.tenant.id,
        target_type="provider",
        target_id=provider_id,
        changes={"inbound_secret": CHANGED},
    )
    info = await services.inbound.secrets.put(
        principal.tenant.id, provider_id, body.given(), audit=event
    )
    return InboundSecretPublic.of(info)


@router.get("/v1/providers/{provider_id}/inbound", response_model=InboundSecretPublic)
async def get_inbound_secret(
    provider_id: str, principal: PrincipalDep, services: ServicesDep
) -> InboundSecretPublic:
    info = await services.inbound.secrets.get(principal.tenant.id, provider_id)
    return InboundSecretPublic.of(info)


@router.delete("/v1/providers/{provider_id}/inbound", status_code=204)
async def delete_inbound_secret(
    provider_id: str, principal: PrincipalDep, services: ServicesDep
) -> Response:
    """Stop accepting this provider's events (they will be answered 404)."""
    event = services.audit.event(
        actor_of(principal),
        AuditAction.INBOUND_SECRET_DELETED,
        tenant_id=principal.tenant.id,
        target_type="provider",
        target_id=provider_id,
    )
    await services.inbound.secrets.delete(principal.tenant.id, provider_id, audit=event)
    return Response(status_code=204)
