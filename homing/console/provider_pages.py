"""A tenant's providers: the fallback order per channel (masked credential previews
only), moved up or down a place, enabled or disabled, and the inbound URL to paste at
the provider (its secret is set in ``homing.console.inbound_secret_pages``).
Reordering renumbers the channel's accounts 10, 20, 30… in the new order, so the next
send's first candidate is the new first (``homing.dispatch.passes`` reads priority).
Each change answers 303 to its page with a flash saying what was done. (Sending
domains: ``homing.console.domain_pages``.)
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.channels import Channel
from homing.console.access import MemberDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.page_params import ProviderId
from homing.console.routing import ConsoleRoute
from homing.console.templating import render
from homing.errors import InvalidRequest, NotFound
from homing.inbound.secrets import KINDS
from homing.managers.audit import diff
from homing.models import AuditAction, ProviderAccount
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

STEP = 10


def _tenant_id(view: View) -> str:
    assert view.seat is not None
    return view.seat.tenant.id


async def _inbound(services: Services, tenant_id: str, account: ProviderAccount) -> str | None:
    """The masked preview of the account's inbound secret, or None when it has none."""
    try:
        return (await services.inbound.secrets.get(tenant_id, account.id)).preview
    except NotFound:
        return None


@router.get("/t/{tenant_id}/providers")
async def providers(request: Request, view: MemberDep, services: ServicesDep) -> Response:
    tenant_id = _tenant_id(view)
    accounts = await services.providers.all(tenant_id)
    channels = {c: [a for a in accounts if a.channel is c] for c in Channel}
    secrets = {a.id: await _inbound(services, tenant_id, a) for a in accounts}
    base = f"{request.url.scheme}://{request.url.netloc}"
    return render(
        request,
        "providers.html",
        channels={c: found for c, found in channels.items() if found},
        secrets=secrets,
        base=base,
        inbound_kinds=KINDS,
    )


def reordered(accounts: list[ProviderAccount], account_id: str, up: bool) -> list[str]:
    """The ids of ``accounts`` (one channel, in order) with ``account_id`` moved a place."""
    ids = [a.id for a in accounts]
    at = ids.index(account_id)
    to = at - 1 if up else at + 1
    if 0 <= to < len(ids):
        ids[at], ids[to] = ids[to], ids[at]
    return ids


@router.post("/t/{tenant_id}/providers/{provider_id}/move")
async def move(
    provider_id: ProviderId, view: MemberDep, form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Move a provider up or down its channel's fallback order."""
    tenant_id = _tenant_id(view)
    direction = form.get("direction", 4)
    if direction not in ("up", "down"):
        raise InvalidRequest("Move a provider up or down.")
    account = await services.providers.get(tenant_id, provider_id)
    siblings = await services.providers.all(tenant_id, account.channel)
    order = reordered(siblings, account.id, direction == "up")
    now = {a.id: a.priority for a in siblings}
    for place, account_id in enumerate(order, start=1):
        if now[account_id] != place * STEP:
            event = services.audit.event(
                view.actor,
                AuditAction.PROVIDER_REORDERED,
                tenant_id=tenant_id,
                target_type="provider",
                target_id=account_id,
                changes={"priority": {"from": now[account_id], "to": place * STEP}},
            )
            await services.providers.update(
                tenant_id, account_id, audit=event, priority=place * STEP
            )
    moved = order != [a.id for a in siblings]
    said = f"{account.vendor} moved {direction}." if moved else f"{account.vendor} stays put."
    await flash(services, view, said)
    return RedirectResponse(f"/t/{tenant_id}/providers", status_code=303)


@router.post("/t/{tenant_id}/providers/{provider_id}/enabled")
async def enable(
    provider_id: ProviderId, view: MemberDep, form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Enable (``enabled=1``) or disable (``enabled=0``) a provider."""
    tenant_id = _tenant_id(view)
    wanted = form.get("enabled", 1)
    if wanted not in ("0", "1"):
        raise InvalidRequest("Enable or disable the provider.")
    current = await services.providers.get(tenant_id, provider_id)
    event = services.audit.event(
        view.actor,
        AuditAction.PROVIDER_UPDATED,
        tenant_id=tenant_id,
        target_type="provider",
        target_id=provider_id,
        changes=diff({"enabled": current.enabled}, {"enabled": wanted == "1"}),
    )
    await services.providers.update(tenant_id, provider_id, audit=event, enabled=wanted == "1")
    said = "enabled." if wanted == "1" else "disabled: sends pass it over."
    await flash(services, view, f"{current.vendor} {said}")
    return RedirectResponse(f"/t/{tenant_id}/providers", status_code=303)
