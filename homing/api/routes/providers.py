"""A tenant's provider accounts: register (checked, sealed), list, patch, delete."""

from __future__ import annotations

from fastapi import APIRouter, Response

from homing.api.actors import actor_of
from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.error_responses import refusals
from homing.api.schemas.providers import ProviderCreate, ProviderPatch, ProviderPublic
from homing.api.schemas.shared import Page
from homing.channels import Channel
from homing.errors import (
    EndpointRefused,
    InvalidCredentials,
    ProviderTimeout,
    QuotaExceeded,
    UnknownProvider,
)
from homing.managers.accounts import NewProvider
from homing.managers.audit import CHANGED, diff
from homing.models import AuditAction

router = APIRouter(tags=["providers"])


@router.post(
    "/v1/providers",
    status_code=201,
    response_model=ProviderPublic,
    responses=refusals(
        QuotaExceeded, InvalidCredentials, UnknownProvider, EndpointRefused, ProviderTimeout
    ),
)
async def create_provider(
    body: ProviderCreate, principal: PrincipalDep, services: ServicesDep
) -> ProviderPublic:
    """Register a provider; its credentials are checked with it before they are stored.
    403 ``quota_exceeded``, before the provider is asked, when the tenant holds
    ``HOMING_MAX_PROVIDERS_PER_TENANT`` accounts already (over all channels; a deleted
    one does not count)."""
    event = services.audit.event(
        actor_of(principal),
        AuditAction.PROVIDER_ADDED,
        tenant_id=principal.tenant.id,
        target_type="provider",
        changes={
            "channel": body.channel,
            "provider": body.provider,
            "priority": body.priority,
            "enabled": body.enabled,
            "config": body.config,
            "credentials": CHANGED,
        },
    )
    account = await services.accounts.register(
        NewProvider(
            tenant_id=principal.tenant.id,
            channel=Channel(body.channel),
            provider=body.provider,
            credentials=body.credentials,
            config=body.config,
            priority=body.priority,
            enabled=body.enabled,
        ),
        audit=event,
    )
    return ProviderPublic.of(account)


@router.get("/v1/providers", response_model=Page[ProviderPublic])
async def list_providers(principal: PrincipalDep, services: ServicesDep) -> Page[ProviderPublic]:
    """The tenant's provider accounts, at most ``HOMING_MAX_PROVIDERS_PER_TENANT`` (50
    by default), all in one page (credentials never shown)."""
    accounts = await services.providers.all(principal.tenant.id)
    return Page[ProviderPublic](data=[ProviderPublic.of(a) for a in accounts])


@router.patch(
    "/v1/providers/{provider_id}",
    response_model=ProviderPublic,
    responses=refusals(InvalidCredentials, EndpointRefused, ProviderTimeout),
)
async def patch_provider(
    provider_id: str, body: ProviderPatch, principal: PrincipalDep, services: ServicesDep
) -> ProviderPublic:
    if body.recheck:
        await services.accounts.recheck(principal.tenant.id, provider_id)
    values = body.model_dump(exclude_none=True, exclude={"rate_rules", "recheck"})
    current = await services.providers.get(principal.tenant.id, provider_id)
    if body.rate_rules is not None:
        rules = [rule.model_dump() for rule in body.rate_rules]
        values["config"] = {**current.config, "rate_rules": rules}
    before = {"priority": current.priority, "enabled": current.enabled, "config": current.config}
    changes = diff(before, values)
    reordered = set(changes) == {"priority"}
    event = services.audit.event(
        actor_of(principal),
        AuditAction.PROVIDER_REORDERED if reordered else AuditAction.PROVIDER_UPDATED,
        tenant_id=principal.tenant.id,
        target_type="provider",
        target_id=provider_id,
        changes=changes,
    )
    account = await services.providers.update(
        principal.tenant.id, provider_id, audit=event, **values
    )
    return ProviderPublic.of(account)


@router.delete("/v1/providers/{provider_id}", status_code=204)
async def delete_provider(
    provider_id: str, principal: PrincipalDep, services: ServicesDep
) -> Response:
    event = services.audit.event(
        actor_of(principal),
        AuditAction.PROVIDER_REMOVED,
        tenant_id=principal.tenant.id,
        target_type="provider",
        target_id=provider_id,
    )
    await services.providers.delete(principal.tenant.id, provider_id, audit=event)
    return Response(status_code=204)
