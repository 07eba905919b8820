"""A tenant's dead letters: the list, a dry-run count and the bulk redrive.

The same manager as ``POST /v1/dead-letters/redrive``: each matching dead letter not
yet redriven is re-queued once, one quota unit per job, and the whole redrive takes
one request of the tenant's sending rate. A dry run counts and changes nothing. The
filter is the provider (or none), chosen from the list's own values. Either answers
303 to the list with a flash saying how many went (or would go).
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import MemberDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.routing import ConsoleRoute
from homing.console.templating import render
from homing.managers.dead_letters import BulkResult
from homing.models import AuditAction, Tenant
from homing.services import Services
from homing.store.dead_letters import DeadLetterFilter

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

PAGE = 50
Cursor = Annotated[str | None, Query(max_length=36)]
Provider = Annotated[str, Query(max_length=40)]


def _filter(tenant_id: str, provider: str) -> DeadLetterFilter:
    return DeadLetterFilter(tenant_id, provider=provider or None)


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
        return f"{result.matched} dead letter{plural} would be redriven. Nothing was changed."
    over = f", {result.refused} refused ({refused_why})" if result.refused else ""
    return f"{result.done} redriven{over}."


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
