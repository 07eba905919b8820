"""The operator API under ``/admin/v1``: tenants, their plans, custom limits, suspension.

Every request passes ``AdminGuard`` first (``HOMING_ADMIN_TOKEN``; the API is 404
while the token is unset).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from homing.api.actors import ADMIN
from homing.api.deps import ServicesDep
from homing.api.schemas.shared import Page
from homing.api.schemas.tenants import (
    TenantCreate,
    TenantCreated,
    TenantDetail,
    TenantPatch,
    TenantPublic,
)
from homing.api.schemas.usage import UsagePublic
from homing.domain.audit import AuditEvent
from homing.managers.audit import diff, tenant_fields
from homing.managers.plans import RATE_WINDOW_SECONDS
from homing.models import AuditAction, Plan, Tenant
from homing.services import Services

router = APIRouter(prefix="/admin/v1", tags=["admin"])


def _public(services: Services, tenant: Tenant) -> TenantPublic:
    return TenantPublic.of(tenant, services.admission.limits(tenant))


@router.post("/tenants", status_code=201, response_model=TenantCreated)
async def create_tenant(
    body: TenantCreate, services: ServicesDep, response: Response
) -> TenantCreated:
    """A new tenant and its first API key (shown once)."""
    response.headers["Cache-Control"] = "no-store"
    event = services.audit.event(
        ADMIN,
        AuditAction.TENANT_CREATED,
        tenant_id=None,
        target_type="tenant",
        changes=body.model_dump(),
    )
    tenant, key = await services.tenant_admin.create(
        body.name,
        Plan(body.plan),
        rate_limit_per_minute=body.rate_limit_per_minute,
        quotas=body.quotas,
        audit=event,
    )
    return TenantCreated(**_public(services, tenant).model_dump(), api_key=key)


@router.get("/tenants", response_model=Page[TenantPublic])
async def list_tenants(
    services: ServicesDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=36)] = None,
) -> Page[TenantPublic]:
    """Every tenant, oldest first, paged with ``cursor``."""
    page = await services.tenant_admin.page(limit=limit, cursor=cursor)
    return Page[TenantPublic](
        data=[_public(services, t) for t in page.tenants], next_cursor=page.next_cursor
    )


@router.get("/tenants/{tenant_id}", response_model=TenantDetail)
async def show_tenant(tenant_id: str, services: ServicesDep) -> TenantDetail:
    """One tenant, its effective limits and this month's usage."""
    tenant = await services.tenant_admin.get(tenant_id)
    report = await services.tenant_admin.usage(tenant)
    return TenantDetail(
        **_public(services, tenant).model_dump(),
        usage=UsagePublic.of(report, RATE_WINDOW_SECONDS),
    )


@router.patch("/tenants/{tenant_id}", response_model=TenantPublic)
async def change_tenant(tenant_id: str, body: TenantPatch, services: ServicesDep) -> TenantPublic:
    """Change name, plan, custom rate limit or custom quotas. Fields left out stay;
    ``null`` returns the rate limit or the quotas to the plan's; ``quotas`` replaces
    the tenant's custom quotas as a whole."""
    changes: dict[str, Any] = {}
    given = body.model_fields_set
    if "name" in given and body.name is not None:
        changes["name"] = body.name
    if "plan" in given and body.plan is not None:
        changes["plan"] = Plan(body.plan)
    if "rate_limit_per_minute" in given:
        changes["rate_limit_per_minute"] = body.rate_limit_per_minute
    if "quotas" in given:
        changes["quota_overrides"] = body.quotas
    changed = diff(tenant_fields(await services.tenant_admin.get(tenant_id)), changes)
    event = services.audit.event(
        ADMIN,
        AuditAction.TENANT_PLAN_CHANGED if "plan" in changed else AuditAction.TENANT_UPDATED,
        tenant_id=tenant_id,
        target_type="tenant",
        target_id=tenant_id,
        changes=changed,
    )
    tenant = await services.tenant_admin.change(tenant_id, event, **changes)
    return _public(services, tenant)


def _suspension(services: Services, tenant_id: str, suspended: bool) -> AuditEvent:
    action = AuditAction.TENANT_SUSPENDED if suspended else AuditAction.TENANT_RESUMED
    return services.audit.event(
        ADMIN,
        action,
        tenant_id=tenant_id,
        target_type="tenant",
        target_id=tenant_id,
        changes={"suspended": suspended},
    )


@router.post("/tenants/{tenant_id}/suspend", response_model=TenantPublic)
async def suspend_tenant(tenant_id: str, services: ServicesDep) -> TenantPublic:
    """Refuse the tenant's requests (403 ``tenant_suspended``); its queued jobs are held."""
    event = _suspension(services, tenant_id, True)
    return _public(services, await services.tenant_admin.suspend(tenant_id, event))


@router.post("/tenants/{tenant_id}/unsuspend", response_model=TenantPublic)
async def unsuspend_tenant(tenant_id: str, services: ServicesDep) -> TenantPublic:
    """Admit the tenant again; its held jobs are released at once."""
    event = _suspension(services, tenant_id, False)
    return _public(services, await services.tenant_admin.unsuspend(tenant_id, event))
