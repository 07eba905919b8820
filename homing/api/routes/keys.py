"""A tenant's API keys: issue (shown once), list, revoke. Test keys cannot manage keys."""

from __future__ import annotations

from fastapi import APIRouter, Response

from homing.api.actors import actor_of
from homing.api.deps import LivePrincipalDep, ServicesDep
from homing.api.error_responses import refusals
from homing.api.schemas.keys import ApiKeyCreate, ApiKeyIssued, ApiKeyPublic
from homing.api.schemas.shared import Page
from homing.errors import Conflict, QuotaExceeded
from homing.models import AuditAction

router = APIRouter(tags=["api keys"])

_NO_STORE = {"Cache-Control": "no-store"}


@router.post(
    "/v1/api-keys", status_code=201, response_model=ApiKeyIssued, responses=refusals(QuotaExceeded)
)
async def create_key(
    body: ApiKeyCreate, principal: LivePrincipalDep, services: ServicesDep, response: Response
) -> ApiKeyIssued:
    """Issue a key; ``key`` is in this response only. ``"test": true`` issues a test
    key (``hk_test_…``), whose jobs go only to sandbox providers. 403 ``quota_exceeded``
    when the tenant holds ``HOMING_MAX_API_KEYS_PER_TENANT`` live keys already (a
    revoked key does not count)."""
    event = services.audit.event(
        actor_of(principal),
        AuditAction.API_KEY_ISSUED,
        tenant_id=principal.tenant.id,
        target_type="api_key",
        changes={"name": body.name, "test": body.test},
    )
    issued, key = await services.keys.issue(
        principal.tenant.id, body.name, test=body.test, audit=event
    )
    response.headers.update(_NO_STORE)
    return ApiKeyIssued(**ApiKeyPublic.of(issued).model_dump(), key=key)


@router.get("/v1/api-keys", response_model=Page[ApiKeyPublic])
async def list_keys(principal: LivePrincipalDep, services: ServicesDep) -> Page[ApiKeyPublic]:
    """The tenant's live keys, at most ``HOMING_MAX_API_KEYS_PER_TENANT`` (100 by
    default), all in one page: prefix, name, created, last used (to the minute)."""
    keys = await services.keys.live(principal.tenant.id)
    return Page[ApiKeyPublic](data=[ApiKeyPublic.of(k) for k in keys])


@router.delete("/v1/api-keys/{key_id}", status_code=204, responses=refusals(Conflict))
async def revoke_key(key_id: str, principal: LivePrincipalDep, services: ServicesDep) -> Response:
    """Revoke a key: refused here at once, on every API process within a second.
    The tenant's last key cannot be revoked (409)."""
    event = services.audit.event(
        actor_of(principal),
        AuditAction.API_KEY_REVOKED,
        tenant_id=principal.tenant.id,
        target_type="api_key",
        target_id=key_id,
    )
    await services.keys.revoke(principal.tenant.id, key_id, audit=event)
    services.admission.forget_key(key_id)
    return Response(status_code=204)
