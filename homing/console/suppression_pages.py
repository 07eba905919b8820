"""A tenant's suppression list: search, add, remove.

The list is the store's (``SuppressionStore.page``): by address, 50 a page, filtered
by channel and by the start of an address as stored (an email address in lower case,
a number in E.164, a chat as ``<vendor>:<chat id>``). An owner adds an email address
or a number, read strictly by the check ``POST /v1/suppressions`` uses
(``entered_key``), or removes any entry (the next send to it goes again); both are
recorded as the API's twins record them, with the user as actor.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.addresses import InvalidAddress, InvalidPhoneNumber
from homing.channels import Channel
from homing.console.access import MemberDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.routing import ConsoleRoute
from homing.console.templating import render
from homing.domain.suppressions import ENTERED_REASONS
from homing.errors import InvalidRequest
from homing.models import AuditAction
from homing.services import Services
from homing.store.suppressions import entered_key, normalize_address

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

PAGE = 50
MAX_ADDRESS = 320
LISTED = (Channel.EMAIL, Channel.SMS, Channel.CHAT)
ENTERED = (Channel.EMAIL, Channel.SMS)
Address = Annotated[str, Query(max_length=MAX_ADDRESS)]
Short = Annotated[str, Query(max_length=10)]


def _tenant_id(view: View) -> str:
    assert view.seat is not None
    return view.seat.tenant.id


def channel_of(name: str, allowed: tuple[Channel, ...]) -> Channel | None:
    """The channel called ``name`` among ``allowed`` (None for no name);
    InvalidRequest for another."""
    if not name:
        return None
    found = next((c for c in allowed if c.value == name), None)
    if found is None:
        raise InvalidRequest("Choose a channel from the list.")
    return found


def _where(tenant_id: str, **query: str) -> str:
    kept = urlencode({k: v for k, v in query.items() if v})
    return f"/t/{tenant_id}/suppressions" + (f"?{kept}" if kept else "")


@dataclass(frozen=True, slots=True)
class Added:
    """The add form as typed (shown again), and why it was refused."""

    channel: str = ""
    address: str = ""
    reason: str = ""
    problem: str | None = None


async def _page(
    request: Request,
    view: View,
    services: Services,
    search: tuple[str, str, str] = ("", "", ""),
    problem: str | None = None,
    added: Added | None = None,
) -> Response:
    """The list for ``search`` (q, channel, cursor), or ``problem`` above it;
    ``added``: the add form as typed, with why it was refused."""
    tenant_id = _tenant_id(view)
    q, channel, cursor = search
    page = None
    try:
        chosen = channel_of(channel, LISTED)
        page = await services.suppressions.page(
            tenant_id, chosen, limit=PAGE, cursor=cursor or None, prefix=q.strip().lower() or None
        )
    except InvalidRequest as exc:
        problem = problem or exc.message
    next_page = None
    if page is not None and page.next_cursor:
        next_page = _where(tenant_id, q=q, channel=channel, cursor=page.next_cursor)
    added = added or Added()
    return render(
        request,
        "suppressions.html",
        422 if problem or added.problem else 200,
        added=added,
        q=q,
        channel=channel,
        entries=page.entries if page else [],
        next_page=next_page,
        problem=problem,
        listed=LISTED,
        entered=ENTERED,
        reasons=ENTERED_REASONS,
    )


@router.get("/t/{tenant_id}/suppressions")
async def suppressions(
    request: Request,
    view: MemberDep,
    services: ServicesDep,
    q: Address = "",
    channel: Short = "",
    cursor: Address = "",
) -> Response:
    """The suppressions whose address starts with ``q``, by address."""
    return await _page(request, view, services, (q, channel, cursor))


@router.post("/t/{tenant_id}/suppressions")
async def add(
    request: Request, view: MemberDep, form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Suppress an email address or a number, as ``POST /v1/suppressions``; a refusal
    shows the list again with what was wrong."""
    tenant_id = _tenant_id(view)
    channel = channel_of(form.get("channel", 10), ENTERED) or Channel.EMAIL
    reason = form.get("reason", 20) or "manual"
    typed = form.get("address", MAX_ADDRESS).strip()
    added = Added(channel.value, typed, reason)
    if reason not in ENTERED_REASONS:
        refused = replace(added, problem="Choose a reason from the list.")
        return await _page(request, view, services, added=refused)
    try:
        address = entered_key(channel, typed)
    except (InvalidAddress, InvalidPhoneNumber) as wrong:
        refused = replace(added, problem=f"Address to suppress: {wrong}")
        return await _page(request, view, services, added=refused)
    event = services.audit.event(
        view.actor,
        AuditAction.SUPPRESSION_ADDED,
        tenant_id=tenant_id,
        target_type="suppression",
        target_id=normalize_address(address),
        changes={"channel": channel.value, "reason": reason},
    )
    entry, created = await services.suppressions.add(
        tenant_id, channel, address, reason, "console", event
    )
    # The address last: a flash is capped, a long one is cut.
    said = "Suppressed: nothing more is sent to " if created else "Already suppressed: "
    await flash(services, view, said + entry.address)
    return RedirectResponse(
        _where(tenant_id, q=entry.address, channel=channel.value), status_code=303
    )


@router.post("/t/{tenant_id}/suppressions/remove")
async def remove(view: MemberDep, form: OwnerFormDep, services: ServicesDep) -> Response:
    """Lift one suppression, as ``DELETE /v1/suppressions`` (404 when there is none)."""
    tenant_id = _tenant_id(view)
    channel = channel_of(form.get("channel", 10), LISTED)
    address = form.get("address", MAX_ADDRESS)
    if channel is None or not address:
        raise InvalidRequest("Name the channel and the address to remove.")
    event = services.audit.event(
        view.actor,
        AuditAction.SUPPRESSION_REMOVED,
        tenant_id=tenant_id,
        target_type="suppression",
        target_id=normalize_address(address),
        changes={"channel": channel.value},
    )
    await services.suppressions.remove(tenant_id, channel, address, event)
    await flash(services, view, "Removed: the next message to that address is sent again.")
    back = _where(tenant_id, q=form.get("q", MAX_ADDRESS), channel=form.get("filter", 10))
    return RedirectResponse(back, status_code=303)
