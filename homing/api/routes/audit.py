"""The audit log: a tenant's own under ``/v1`` (live keys only), every tenant's under
``/admin/v1``. Newest first, filtered by action and time, paged with ``cursor``."""

from __future__ import annotations

from fastapi import APIRouter

from homing.api.deps import LivePrincipalDep, ServicesDep
from homing.api.route_params import Cursor, Limit, TenantFilter
from homing.api.schemas.audit import AuditEventPublic
from homing.api.schemas.shared import Moment, Page
from homing.domain.audit import AuditFilter
from homing.errors import InvalidRequest
from homing.models import AuditAction
from homing.services import Services

router = APIRouter(tags=["audit log"])


async def _page(
    services: Services, f: AuditFilter, limit: int, cursor: str | None
) -> Page[AuditEventPublic]:
    if f.since is not None and f.until is not None and f.since > f.until:
        raise InvalidRequest("since must not be after until", {"field": "since"})
    events, next_cursor = await services.audit.page(f, limit=limit, cursor=cursor)
    return Page[AuditEventPublic](
        data=[AuditEventPublic.of(e) for e in events], next_cursor=next_cursor
    )


@router.get("/v1/audit-log", response_model=Page[AuditEventPublic])
async def list_audit_log(
    principal: LivePrincipalDep,
    services: ServicesDep,
    action: AuditAction | None = None,
    since: Moment | None = None,
    until: Moment | None = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Page[AuditEventPublic]:
    """The tenant's audit events, newest first; ``since``/``until`` bound ``created_at``."""
    f = AuditFilter(principal.tenant.id, action, since, until)
    return await _page(services, f, limit, cursor)


@router.get("/admin/v1/audit-log", response_model=Page[AuditEventPublic])
async def admin_list_audit_log(
    services: ServicesDep,
    tenant_id: TenantFilter = None,
    action: AuditAction | None = None,
    since: Moment | None = None,
    until: Moment | None = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Page[AuditEventPublic]:
    """Every tenant's audit events (or ``tenant_id``'s), newest first."""
    return await _page(services, AuditFilter(tenant_id, action, since, until), limit, cursor)
