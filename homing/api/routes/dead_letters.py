"""The dead-letter console: a tenant's own under ``/v1``, every tenant's under ``/admin/v1``.

Test keys are refused (dead letters are live data; ``homing.api.key_scope``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from homing.api.actors import ADMIN, actor_of
from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.error_responses import refusals
from homing.api.route_params import Cursor, Limit, TenantFilter
from homing.api.schemas.dead_letters import (
    MAX_Q,
    BulkBody,
    DeadLetterDetail,
    DeadLetterPublic,
    Purged,
    Redriven,
)
from homing.api.schemas.shared import Moment, Page
from homing.domain.dead_letters import DeadLetterFilter
from homing.errors import QuotaExceeded, RateLimited
from homing.models import Actor, AuditAction
from homing.services import Services

router = APIRouter(tags=["dead letters"])

Short = Annotated[str | None, Query(max_length=40)]
Text = Annotated[str | None, Query(min_length=1, max_length=MAX_Q)]


async def _page(
    services: Services, f: DeadLetterFilter, limit: int, cursor: str | None
) -> Page[DeadLetterPublic]:
    rows, next_cursor = await services.dead_letter_store.page(f, limit=limit, cursor=cursor)
    return Page[DeadLetterPublic](
        data=[DeadLetterPublic.of(d) for d in rows], next_cursor=next_cursor
    )


async def _detail(services: Services, tenant_id: str | None, id: str) -> DeadLetterDetail:
    letter = await services.dead_letter_store.get(tenant_id, id)
    _, attempts = await services.jobs.get(letter.tenant_id, letter.job_id)
    return DeadLetterDetail.full(letter, attempts)


async def _audited(
    services: Services,
    actor: Actor,
    tenant_id: str | None,
    action: AuditAction,
    body: BulkBody,
    done: dict[str, int],
) -> None:
    """Record a bulk action once it is done (it spans many transactions); a dry run
    or one that touched nothing changes nothing and records nothing."""
    if body.dry_run or not any(done.values()):
        return
    changes = {
        "filter": body.filter.model_dump(exclude_none=True),
        "ids": len(body.ids) if body.ids is not None else None,
        **done,
    }
    await services.audit.record(
        services.audit.event(
            actor, action, tenant_id=tenant_id, target_type="dead_letters", changes=changes
        )
    )


@router.get("/v1/dead-letters", response_model=Page[DeadLetterPublic])
async def list_dead_letters(
    principal: PrincipalDep,
    services: ServicesDep,
    queue: Short = None,
    error_class: Short = None,
    provider: Short = None,
    since: Moment | None = None,
    until: Moment | None = None,
    q: Text = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Page[DeadLetterPublic]:
    """The tenant's dead letters, newest first; ``q`` is literal text in the error."""
    f = DeadLetterFilter(
        tenant_id=principal.tenant.id,
        queue=queue,
        error_class=error_class,
        provider=provider,
        since=since,
        until=until,
        q=q,
    )
    return await _page(services, f, limit, cursor)


@router.get("/v1/dead-letters/{dead_letter_id}", response_model=DeadLetterDetail)
async def show_dead_letter(
    dead_letter_id: str, principal: PrincipalDep, services: ServicesDep
) -> DeadLetterDetail:
    """One dead letter: payload (webhook headers sealed), attempts, error. 404 for
    another tenant's."""
    return await _detail(services, principal.tenant.id, dead_letter_id)


@router.post(
    "/v1/dead-letters/redrive",
    response_model=Redriven,
    responses=refusals(RateLimited, QuotaExceeded),
)
async def redrive(body: BulkBody, principal: PrincipalDep, services: ServicesDep) -> Redriven:
    """Re-queue the matching dead letters' jobs once each, one quota unit per job and
    one request of the sending rate for the whole (429 ``rate_limited`` past it).
    ``uncertain`` counts those whose last call may have reached the provider: a
    redrive may deliver them twice (a ``dry_run`` tells before anything is sent)."""
    if body.filter.tenant_id not in (None, principal.tenant.id):
        return Redriven(matched=0, redriven=0, refused=0)
    r = await services.dead_letters.redrive(
        body.to_filter(principal.tenant.id),
        body.ids,
        dry_run=body.dry_run,
        tenant=principal.tenant,
    )
    if r.done:
        services.wakeup.notify()
    await _audited(
        services,
        actor_of(principal),
        principal.tenant.id,
        AuditAction.DEAD_LETTERS_REDRIVEN,
        body,
        {"redriven": r.done},
    )
    return Redriven.of(r)


@router.post("/v1/dead-letters/purge", response_model=Purged)
async def purge(body: BulkBody, principal: PrincipalDep, services: ServicesDep) -> Purged:
    """Delete the matching dead-letter rows; the jobs stay FAILED."""
    if body.filter.tenant_id not in (None, principal.tenant.id):
        return Purged(matched=0, purged=0)
    r = await services.dead_letters.purge(
        body.to_filter(principal.tenant.id),
        body.ids,
        dry_run=body.dry_run,
        tenant=principal.tenant,
    )
    await _audited(
        services,
        actor_of(principal),
        principal.tenant.id,
        AuditAction.DEAD_LETTERS_PURGED,
        body,
        {"purged": r.done},
    )
    return Purged(matched=r.matched, purged=r.done)


@router.get("/admin/v1/dead-letters", response_model=Page[DeadLetterPublic])
async def admin_list_dead_letters(
    services: ServicesDep,
    tenant_id: TenantFilter = None,
    queue: Short = None,
    error_class: Short = None,
    provider: Short = None,
    since: Moment | None = None,
    until: Moment | None = None,
    q: Text = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Page[DeadLetterPublic]:
    """Every tenant's dead letters (or ``tenant_id``'s), newest first."""
    f = DeadLetterFilter(
        tenant_id=tenant_id,
        queue=queue,
        error_class=error_class,
        provider=provider,
        since=since,
        until=until,
        q=q,
    )
    return await _page(services, f, limit, cursor)


@router.get("/admin/v1/dead-letters/{dead_letter_id}", response_model=DeadLetterDetail)
async def admin_show_dead_letter(dead_letter_id: str, services: ServicesDep) -> DeadLetterDetail:
    """One dead letter of any tenant."""
    return await _detail(services, None, dead_letter_id)


@router.post("/admin/v1/dead-letters/redrive", response_model=Redriven)
async def admin_redrive(body: BulkBody, services: ServicesDep) -> Redriven:
    """Redrive across tenants (``filter.tenant_id`` narrows), each under its quota and
    paying its sending rate once (a tenant whose rate is full keeps its jobs FAILED,
    counted as refused)."""
    r = await services.dead_letters.redrive(body.to_filter(None), body.ids, dry_run=body.dry_run)
    if r.done:
        services.wakeup.notify()
    await _audited(
        services,
        ADMIN,
        body.filter.tenant_id,
        AuditAction.DEAD_LETTERS_REDRIVEN,
        body,
        {"redriven": r.done},
    )
    return Redriven.of(r)


@router.post("/admin/v1/dead-letters/purge", response_model=Purged)
async def admin_purge(body: BulkBody, services: ServicesDep) -> Purged:
    """Purge across tenants (``filter.tenant_id`` narrows)."""
    r = await services.dead_letters.purge(body.to_filter(None), body.ids, dry_run=body.dry_run)
    action = AuditAction.DEAD_LETTERS_PURGED
    await _audited(services, ADMIN, body.filter.tenant_id, action, body, {"purged": r.done})
    return Purged(matched=r.matched, purged=r.done)
