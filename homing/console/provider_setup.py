"""Adding a provider from the console, and removing one.

Adding is two pages, so it needs no script: the vendor is chosen first (a GET form,
the vendors grouped by channel), then its fields are shown, drawn from one table
(``homing.managers.provider_fields``, derived from what the accounts manager requires).
The account is registered by ``ProviderAccounts.register``, as ``POST /v1/providers``
does: the credentials are checked with the provider under its deadline before they
are sealed. A refusal shows the form again with the provider's answer, its plain
fields as typed and every secret field empty: a secret is never sent back to the
browser. The new account goes last in its channel's fallback order. Removing asks
first, then soft-deletes the account as ``DELETE /v1/providers/{id}`` does. Either
answers 303 to the providers page with a flash saying what was done.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.channels import Channel
from homing.console.access import MemberDep, OwnerDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.forms import Form
from homing.console.page_params import ProviderId
from homing.console.routing import ConsoleRoute, status_of
from homing.console.templating import render
from homing.errors import InvalidRequest, QuotaExceeded
from homing.managers.accounts import NewProvider
from homing.managers.audit import CHANGED
from homing.managers.provider_fields import MAX_FIELD_CHARS, VENDOR_FIELDS, VENDORS, VendorField
from homing.models import AuditAction
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

VendorName = Annotated[str, Query(max_length=20)]
STEP = 10
MAX_PRIORITY = 1000


def _tenant_id(view: View) -> str:
    assert view.seat is not None
    return view.seat.tenant.id


def vendor_of(name: str) -> tuple[str, Channel]:
    """The vendor called ``name`` and its channel; InvalidRequest for another name."""
    channel = VENDORS.get(name)
    if channel is None:
        raise InvalidRequest("Choose a provider from the list.")
    return name, channel


def _form_page(
    request: Request,
    vendor: str | None,
    typed: dict[str, str] | None = None,
    problem: str | None = None,
    status: int = 200,
) -> Response:
    # A channel no vendor serves (in_app: Homing stores it) offers no choice.
    offered = {c: [v for v, of in VENDORS.items() if of is c] for c in Channel}
    channels = {c: names for c, names in offered.items() if names}
    return render(
        request,
        "provider_new.html",
        status,
        vendor=vendor,
        channel=VENDORS[vendor] if vendor else None,
        fields=VENDOR_FIELDS[vendor] if vendor else (),
        channels={c: names for c, names in channels.items() if names},
        typed=typed or {},
        problem=problem,
    )


@router.get("/t/{tenant_id}/providers/new")
async def new_provider(request: Request, _view: OwnerDep, vendor: VendorName = "") -> Response:
    """Step one, the vendor (no ``vendor``); step two, its fields."""
    if not vendor:
        return _form_page(request, None)
    try:
        name, _ = vendor_of(vendor)
    except InvalidRequest as exc:
        return _form_page(request, None, problem=exc.message, status=422)
    return _form_page(request, name)


def read_fields(
    form: Form, fields: tuple[VendorField, ...]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The credentials and config a vendor's form carries; empty optional fields are
    left out, a missing required one is InvalidRequest."""
    credentials: dict[str, Any] = {}
    config: dict[str, Any] = {}
    for field in fields:
        raw = form.get(field.name, MAX_FIELD_CHARS)
        value: Any = raw if field.secret else raw.strip()
        if field.kind == "flag":
            value = True if value in ("1", "on", "true") else None
        if field.required and not (value.strip() if isinstance(value, str) else value):
            raise InvalidRequest(f"{field.label}: this field is needed.")
        if value:
            (config if field.config else credentials)[field.name] = value
    return credentials, config


async def _last_place(services: Services, tenant_id: str, channel: Channel) -> int:
    accounts = await services.providers.all(tenant_id, channel)
    last = max((a.priority for a in accounts), default=0)
    return min(MAX_PRIORITY, (last // STEP + 1) * STEP)


def _without_secrets(message: str, credentials: dict[str, Any]) -> str:
    """The provider's answer with any secret value of the form cut out (a second net:
    the manager's messages quote only field names and statuses)."""
    for value in credentials.values():
        if isinstance(value, str) and len(value) >= 4:
            message = message.replace(value, "…")
    return message


@router.post("/t/{tenant_id}/providers/new")
async def add_provider(
    request: Request, view: MemberDep, form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Register the provider the form describes, once the provider accepts it."""
    tenant_id = _tenant_id(view)
    vendor, channel = vendor_of(form.get("vendor", 20))
    fields = VENDOR_FIELDS[vendor]
    typed = {f.name: form.get(f.name, MAX_FIELD_CHARS) for f in fields if not f.secret}
    try:
        credentials, config = read_fields(form, fields)
    except InvalidRequest as exc:
        return _form_page(request, vendor, typed, exc.message, status_of(exc))
    priority = await _last_place(services, tenant_id, channel)
    event = services.audit.event(
        view.actor,
        AuditAction.PROVIDER_ADDED,
        tenant_id=tenant_id,
        target_type="provider",
        changes={
            "channel": channel.value,
            "provider": vendor,
            "priority": priority,
            "enabled": True,
            "config": config,
            "credentials": CHANGED,
        },
    )
    new = NewProvider(
        tenant_id=tenant_id,
        channel=channel,
        provider=vendor,
        credentials=credentials,
        config=config,
        priority=priority,
    )
    try:
        account = await services.accounts.register(new, audit=event)
    except QuotaExceeded as exc:
        problem = exc.message[:1].upper() + exc.message[1:] + ": remove one to make room."
        return _form_page(request, vendor, typed, problem, status_of(exc))
    except InvalidRequest as exc:
        problem = _without_secrets(exc.message, credentials)
        return _form_page(request, vendor, typed, problem, status_of(exc))
    said = f"{vendor} added, its credentials checked: last in the {channel.value} fallback order."
    await flash(services, view, said)
    return RedirectResponse(f"/t/{tenant_id}/providers#p-{account.id}", status_code=303)


@router.get("/t/{tenant_id}/providers/{provider_id}/remove")
async def confirm_remove(
    request: Request, provider_id: ProviderId, view: OwnerDep, services: ServicesDep
) -> Response:
    """Ask before removing: what goes, and that it cannot be undone."""
    account = await services.providers.get(_tenant_id(view), provider_id)
    return render(request, "provider_remove.html", account=account)


@router.post("/t/{tenant_id}/providers/{provider_id}/remove")
async def remove(
    provider_id: ProviderId, view: MemberDep, _form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Remove the provider (its sealed credentials and inbound secret are wiped)."""
    tenant_id = _tenant_id(view)
    account = await services.providers.get(tenant_id, provider_id)
    event = services.audit.event(
        view.actor,
        AuditAction.PROVIDER_REMOVED,
        tenant_id=tenant_id,
        target_type="provider",
        target_id=provider_id,
    )
    await services.providers.delete(tenant_id, provider_id, audit=event)
    said = f"{account.vendor} removed: sends no longer try it; its credentials are wiped."
    await flash(services, view, said)
    return RedirectResponse(f"/t/{tenant_id}/providers", status_code=303)
