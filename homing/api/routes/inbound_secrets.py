"""Each provider account's inbound secret: set (checked, sealed), read (masked), remove."""

from __future__ import annotations

from fastapi import APIRouter, Response

from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.inbound_schemas import InboundSecretPublic, InboundSecretPut

router = APIRouter(tags=["providers"])


@router.put("/v1/providers/{provider_id}/inbound", response_model=InboundSecretPublic)
async def put_inbound_secret(
    provider_id: str, body: InboundSecretPut, principal: PrincipalDep, services: ServicesDep
) -> InboundSecretPublic:
    """Set the secret that verifies this provider's events; ``path`` is where to post them."""
    info = await services.inbound.secrets.put(principal.tenant.id, provider_id, body.given())
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
    await services.inbound.secrets.delete(principal.tenant.id, provider_id)
    return Response(status_code=204)
