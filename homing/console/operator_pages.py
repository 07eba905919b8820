"""The operator's pages: tenants (plan, limits, suspend and resume) and the queues.

Only a user with the operator flag sees them; to anyone else they are 404. The data
is the admin API's (``/admin/v1/tenants``, ``/admin/v1/queues``), through the same
managers and stores. Suspending, resuming and changing a plan (as ``PATCH
/admin/v1/tenants/{id}`` does, audited as a plan change) answer 303 with a flash; a
plan that is not one shows the page again, the reason beside that tenant's choice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import OperatorDep, OperatorFormDep, ServicesDep, TenantId, View
from homing.console.flash import flash
from homing.console.routing import ConsoleRoute
from homing.console.templating import render
from homing.domain.audit import AuditEvent
from homing.managers.audit import diff, tenant_fields
from homing.models import AuditAction, Plan
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

PAGE = 50
# Backlogs by tenant, queue and priority shown on the queues page.
TENANT_ROWS = 20
CursorQuery = Annotated[str | None, Query(max_length=36)]


@router.get("/operator/tenants")
async def tenants(
    request: Request, _view: OperatorDep, services: ServicesDep, cursor: CursorQuery = None
) -> Response:
    """Every tenant, oldest first, a page at a time, with its plan and limits."""
    return await _tenants_page(request, services, cursor)


async def _tenants_page(
    request: Request,
    services: Services,
    cursor: str | None = None,
    refused: PlanRefused | None = None,
) -> Response:
    page = await services.tenant_admin.page(limit=PAGE, cursor=cursor)
    rows = [(t, services.admission.limits(t)) for t in page.tenants]
    return render(
        request,
        "operator_tenants.html",
        422 if refused else 200,
        rows=rows,
        next_cursor=page.next_cursor,
        plans=list(Plan),
        refused=refused,
    )


@dataclass(frozen=True, slots=True)
class PlanRefused:
    """A plan change the page refused: the tenant, what was chosen and why not."""

    tenant_id: str
    typed: str
    problem: str


@router.post("/operator/tenants/{tenant_id}/plan")
async def change_plan(
    request: Request,
    tenant_id: TenantId,
    view: OperatorDep,
    form: OperatorFormDep,
    services: ServicesDep,
) -> Response:
    """Move the tenant to another plan (its rate and quotas follow, unless custom)."""
    typed = form.get("plan", 20)
    if typed not in set(Plan):
        refused = PlanRefused(tenant_id, typed, "Choose one of the plans in the list.")
        return await _tenants_page(request, services, refused=refused)
    before = await services.tenant_admin.get(tenant_id)
    changed = diff(tenant_fields(before), {"plan": Plan(typed)})
    event = services.audit.event(
        view.actor,
        AuditAction.TENANT_PLAN_CHANGED if changed else AuditAction.TENANT_UPDATED,
        tenant_id=tenant_id,
        target_type="tenant",
        target_id=tenant_id,
        changes=changed,
    )
    tenant = await services.tenant_admin.change(tenant_id, event, plan=Plan(typed))
    limits = services.admission.limits(tenant)
    rate = f"{limits.rate_per_minute} requests a minute"
    said = f"Tenant {tenant.name} is on {tenant.plan.value} now: {rate}."
    if not changed:
        said = f"Tenant {tenant.name} was already on {tenant.plan.value}."
    await flash(services, view, said)
    return RedirectResponse(f"/operator/tenants#t-{tenant_id}", status_code=303)


def _suspension(services: Services, view: View, tenant_id: str, suspended: bool) -> AuditEvent:
    """The event ``/admin/v1/tenants/{id}/suspend`` (or ``unsuspend``) records, by the
    signed-in operator."""
    return services.audit.event(
        view.actor,
        AuditAction.TENANT_SUSPENDED if suspended else AuditAction.TENANT_RESUMED,
        tenant_id=tenant_id,
        target_type="tenant",
        target_id=tenant_id,
        changes={"suspended": suspended},
    )


@router.post("/operator/tenants/{tenant_id}/suspend")
async def suspend(
    tenant_id: TenantId, view: OperatorDep, _form: OperatorFormDep, services: ServicesDep
) -> Response:
    """Refuse the tenant's requests and hold its jobs (``homing tenant suspend``)."""
    event = _suspension(services, view, tenant_id, True)
    tenant = await services.tenant_admin.suspend(tenant_id, event)
    said = f"Tenant {tenant.name} suspended: its requests are refused and its jobs held."
    await flash(services, view, said)
    return RedirectResponse("/operator/tenants", status_code=303)


@router.post("/operator/tenants/{tenant_id}/resume")
async def resume(
    tenant_id: TenantId, view: OperatorDep, _form: OperatorFormDep, services: ServicesDep
) -> Response:
    """Admit the tenant again and release its held jobs."""
    event = _suspension(services, view, tenant_id, False)
    tenant = await services.tenant_admin.unsuspend(tenant_id, event)
    services.wakeup.notify()
    await flash(services, view, f"Tenant {tenant.name} resumed: its held jobs are released.")
    return RedirectResponse("/operator/tenants", status_code=303)


@router.get("/operator/queues")
async def queues(request: Request, _view: OperatorDep, services: ServicesDep) -> Response:
    """Depth by queue, priority and state, the oldest waiting, the busiest tenants and
    their backlog by queue and priority."""
    view = await services.jobs.queues()
    by_tenant = await services.jobs.tenant_depths(TENANT_ROWS)
    return render(request, "operator_queues.html", queues=view, by_tenant=by_tenant)
