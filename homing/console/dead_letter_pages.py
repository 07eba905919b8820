"""A tenant's dead letters: the list, a dry-run count, the bulk redrive and the purge.

The same manager as ``POST /v1/dead-letters/redrive``: each matching dead letter not
yet redriven is re-queued once, one quota unit per job, and the whole redrive takes
one request of the tenant's sending rate. A dry run counts and changes nothing, and
says how many are ``uncertain`` (their message may have reached the provider, so a
redrive may send a second copy): the count is the confirmation before a redrive. The
filter is the provider (or none), chosen from the list's own values. Either answers
303 to the list with a flash saying how many went (or would go). The purge is
``POST /v1/dead-letters/purge``'s: a page first counts what the filter matches and
asks; confirmed, the rows go (their jobs stay FAILED), recorded as one audit event.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import MemberDep, OwnerDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.page_params import Cursor
from homing.console.routing import ConsoleRoute, status_of
from homing.console.templating import render
from homing.domain.dead_letters import DeadLetterFilter
from homing.errors import InvalidRequest
from homing.managers.dead_letters import BulkResult
from homing.models import AuditAction, Tenant
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

PAGE = 50
Provider = Annotated[str, Query(max_length=40)]


def _filter(tenant_id: str, provider: str) -> DeadLetterFilter:
    return DeadLetterFilter(tenant_id=tenant_id, provider=provider or None)


@router.get("/t/{tenant_id}/dead-letters")
async def dead_letters(
    request: Request,
    view: MemberDep,
    services: ServicesDep,
    provider: Provider = "",
    cursor: Cursor = None,
) -> Response:
    """The tenant's dead letters, newest first."""
    assert view.seat is not None
    f = _filter(view.seat.tenant.id, provider)
    letters, next_cursor = await services.dead_letter_store.page(f, limit=PAGE, cursor=cursor)
    return render(
        request,
        "dead_letters.html",
        letters=letters,
        provider=provider,
        next_cursor=next_cursor,
    )


async def redrive_and_say(
    services: Services,
    view: View,
    f: DeadLetterFilter,
    shown_filter: dict[str, str],
    *,
    dry_run: bool,
    refused_why: str,
    tenant: Tenant | None = None,
) -> None:
    """Redrive (or count, ``dry_run``) the dead letters ``f`` matches, as the API's
    twins do: once done, a bulk change of many transactions is one audit event (with
    ``shown_filter``; a dry run or one that touched nothing records nothing); then a
    flash saying how many went (or would go), ``refused_why`` naming what refused some.
    ``tenant``: the tenant redriving its own; None for the operator."""
    result = await services.dead_letters.redrive(f, None, dry_run=dry_run, tenant=tenant)
    if result.done:
        services.wakeup.notify()
    if not dry_run and result.done:
        await services.audit.record(
            services.audit.event(
                view.actor,
                AuditAction.DEAD_LETTERS_REDRIVEN,
                tenant_id=f.tenant_id,
                target_type="dead_letters",
                changes={"filter": shown_filter, "ids": None, "redriven": result.done},
            )
        )
    await flash(services, view, _said(result, dry_run, refused_why))


def _said(result: BulkResult, dry_run: bool, refused_why: str) -> str:
    if dry_run:
        plural = "" if result.matched == 1 else "s"
        said = f"{result.matched} dead letter{plural} would be redriven."
        return f"{said}{_uncertain(result)} Nothing was changed."
    over = f", {result.refused} refused ({refused_why})" if result.refused else ""
    return f"{result.done} redriven{over}.{_uncertain(result)}"


def _uncertain(result: BulkResult) -> str:
    """The warning a redrive of ``uncertain`` dead letters deserves: their message may
    already have reached the provider, so it may arrive twice."""
    if not result.uncertain:
        return ""
    n = result.uncertain
    which = "1 of them is" if n == 1 else f"{n} of them are"
    return (
        f" {which} uncertain: the message may already have reached the provider,"
        " so a redrive may deliver a second copy."
    )


@router.post("/t/{tenant_id}/dead-letters/redrive")
async def redrive(view: MemberDep, form: OwnerFormDep, services: ServicesDep) -> Response:
    """Redrive the tenant's dead letters of the chosen provider (or all), or count them."""
    assert view.seat is not None
    tenant_id = view.seat.tenant.id
    provider = form.get("provider", 40)
    await redrive_and_say(
        services,
        view,
        _filter(tenant_id, provider),
        {"provider": provider} if provider else {},
        dry_run=form.has("dry_run"),
        refused_why="over the month's quota",
        tenant=view.seat.tenant,
    )
    where = f"/t/{tenant_id}/dead-letters" + (
        f"?{urlencode({'provider': provider})}" if provider else ""
    )
    return RedirectResponse(where, status_code=303)


def _listed(tenant_id: str, provider: str) -> str:
    query = f"?{urlencode({'provider': provider})}" if provider else ""
    return f"/t/{tenant_id}/dead-letters{query}"


async def _purge_page(
    request: Request,
    view: View,
    services: Services,
    provider: str,
    problem: str | None = None,
    status: int = 200,
) -> Response:
    """The purge's question: how many dead letters the filter matches (a dry run)."""
    assert view.seat is not None
    tenant = view.seat.tenant
    matched = 0
    if problem is None:
        found = await services.dead_letters.purge(
            _filter(tenant.id, provider), None, dry_run=True, tenant=tenant
        )
        matched = found.matched
    return render(
        request,
        "dead_letters_purge.html",
        status,
        provider=provider,
        matched=matched,
        problem=problem,
        back=_listed(tenant.id, "" if problem else provider),
    )


@router.get("/t/{tenant_id}/dead-letters/purge")
async def confirm_purge(
    request: Request, view: OwnerDep, services: ServicesDep, provider: Provider = ""
) -> Response:
    """Count what the purge would delete, and ask."""
    return await _purge_page(request, view, services, provider.strip())


@router.post("/t/{tenant_id}/dead-letters/purge")
async def purge(
    request: Request, view: MemberDep, form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Delete the dead letters of the chosen provider (or all); their jobs stay FAILED.
    Audited once done, as the API's purge is."""
    assert view.seat is not None
    tenant = view.seat.tenant
    try:
        provider = form.get("provider", 40).strip()
    except InvalidRequest as exc:
        typed = form.get("provider", 16 * 1024)[:40]
        return await _purge_page(request, view, services, typed, exc.message, status_of(exc))
    result = await services.dead_letters.purge(
        _filter(tenant.id, provider), None, dry_run=False, tenant=tenant
    )
    if result.done:
        await services.audit.record(
            services.audit.event(
                view.actor,
                AuditAction.DEAD_LETTERS_PURGED,
                tenant_id=tenant.id,
                target_type="dead_letters",
                changes={
                    "filter": {"provider": provider} if provider else {},
                    "ids": None,
                    "purged": result.done,
                },
            )
        )
    plural = "" if result.done == 1 else "s"
    said = f"{result.done} dead letter{plural} purged; their messages stay failed."
    await flash(services, view, said)
    return RedirectResponse(_listed(tenant.id, provider), status_code=303)
