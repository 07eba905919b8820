"""Sending domains: register with a provider (DNS records back), verify, list, forget."""

from __future__ import annotations

from fastapi import APIRouter, Response

from homing.api.actors import actor_of
from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.error_responses import refusals
from homing.api.schemas.domains import DomainCreate, DomainPublic
from homing.api.schemas.shared import Page
from homing.errors import Conflict, EndpointRefused, NotFound, ProviderTimeout, QuotaExceeded
from homing.managers.sending_domains import ProviderRefused
from homing.models import AuditAction

router = APIRouter(tags=["domains"])

# A provider with no sending-domain API (``homing.providers.domain_api``, a layer the
# API may not import): its code.
_UNSUPPORTED = "domains_unsupported"


@router.post(
    "/v1/domains",
    status_code=201,
    response_model=DomainPublic,
    responses=refusals(
        NotFound,
        Conflict,
        QuotaExceeded,
        _UNSUPPORTED,
        ProviderRefused,
        ProviderTimeout,
        EndpointRefused,
    ),
)
async def register_domain(
    body: DomainCreate, principal: PrincipalDep, services: ServicesDep
) -> DomainPublic:
    """Register ``domain`` with one of the tenant's email providers; publish ``records``.
    403 ``quota_exceeded``, before the provider is asked, when the tenant holds
    ``HOMING_MAX_DOMAINS_PER_TENANT`` domains already."""
    event = services.audit.event(
        actor_of(principal),
        AuditAction.DOMAIN_ADDED,
        tenant_id=principal.tenant.id,
        target_type="domain",
        changes={"domain": body.domain, "provider_account_id": body.provider_account_id},
    )
    domain = await services.domains.register(
        principal.tenant.id, body.domain, body.provider_account_id, event
    )
    return DomainPublic.of(domain)


@router.get("/v1/domains", response_model=Page[DomainPublic])
async def list_domains(principal: PrincipalDep, services: ServicesDep) -> Page[DomainPublic]:
    """The tenant's sending domains, at most ``HOMING_MAX_DOMAINS_PER_TENANT`` (50 by
    default), all in one page."""
    domains = await services.domains.all(principal.tenant.id)
    return Page[DomainPublic](data=[DomainPublic.of(d) for d in domains])


@router.get("/v1/domains/{domain_id}", response_model=DomainPublic)
async def get_domain(
    domain_id: str, principal: PrincipalDep, services: ServicesDep
) -> DomainPublic:
    return DomainPublic.of(await services.domains.get(principal.tenant.id, domain_id))


@router.post(
    "/v1/domains/{domain_id}/verify",
    response_model=DomainPublic,
    responses=refusals(_UNSUPPORTED, ProviderRefused, ProviderTimeout, EndpointRefused),
)
async def verify_domain(
    domain_id: str, principal: PrincipalDep, services: ServicesDep
) -> DomainPublic:
    """Ask the provider to check the DNS records now; the answer is the new status."""
    domain = await services.domains.verify(principal.tenant.id, domain_id)
    return DomainPublic.of(domain)


@router.delete(
    "/v1/domains/{domain_id}",
    status_code=204,
    responses=refusals(_UNSUPPORTED, ProviderRefused, ProviderTimeout, EndpointRefused),
)
async def delete_domain(domain_id: str, principal: PrincipalDep, services: ServicesDep) -> Response:
    """Forget a domain in Homing (the provider keeps its registration)."""
    event = services.audit.event(
        actor_of(principal),
        AuditAction.DOMAIN_REMOVED,
        tenant_id=principal.tenant.id,
        target_type="domain",
        target_id=domain_id,
    )
    await services.domains.delete(principal.tenant.id, domain_id, event)
    return Response(status_code=204)
