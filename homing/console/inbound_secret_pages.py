"""A provider account's inbound secret: what verifies the events the vendor posts to
the account's inbound URL. Set (checked and sealed by ``homing.inbound.secrets``, as
``PUT /v1/providers/{id}/inbound`` does) or removed after a question (as ``DELETE``
does: the account's events are answered 404 from then on), each audited as the API's
twin is. The form asks for what the vendor uses (``KINDS``): a key, a secret, a token
or a username and password. A refusal shows the form again with the reason beside
the field, the plain fields as typed and every secret field empty: a secret is never
sent back to the browser. Either change answers 303 to the providers page with a
flash; afterwards only the secret's masked preview is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import MemberDep, OwnerDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.forms import Form
from homing.console.page_params import ProviderId
from homing.console.routing import ConsoleRoute, status_of
from homing.console.templating import render
from homing.errors import InvalidRequest, NotFound
from homing.inbound.secrets import KINDS, InboundSecretInfo, inbound_path
from homing.managers.audit import CHANGED
from homing.models import AuditAction, ProviderAccount
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

# The API's bounds (``homing.api.schemas.inbound_secrets``).
MAX_SECRET = 4096
MAX_CREDENTIAL = 256


@dataclass(frozen=True, slots=True)
class SecretField:
    """One field of the form: its name, label, bound and whether it is a secret (never
    shown again)."""

    name: str
    label: str
    max_length: int
    secret: bool


FIELDS: dict[str, tuple[SecretField, ...]] = {
    "verification_key": (
        SecretField("verification_key", "Verification key (base64 public key)", MAX_SECRET, False),
    ),
    "signing_secret": (SecretField("signing_secret", "Signing secret", MAX_SECRET, True),),
    "secret_token": (SecretField("secret_token", "Secret token", MAX_CREDENTIAL, True),),
    "basic_auth": (
        SecretField("username", "Username", MAX_CREDENTIAL, False),
        SecretField("password", "Password", MAX_CREDENTIAL, True),
    ),
}


def _tenant_id(view: View) -> str:
    assert view.seat is not None
    return view.seat.tenant.id


async def _current(services: Services, tenant_id: str, account_id: str) -> InboundSecretInfo | None:
    try:
        return await services.inbound.secrets.get(tenant_id, account_id)
    except NotFound:
        return None


async def _page(
    request: Request,
    view: View,
    services: Services,
    account: ProviderAccount,
    typed: dict[str, str] | None = None,
    problem: str | None = None,
    status: int = 200,
) -> Response:
    kind = KINDS.get(account.vendor)
    return render(
        request,
        "inbound_secret.html",
        status,
        account=account,
        kind=kind,
        fields=FIELDS.get(kind or "", ()),
        current=await _current(services, _tenant_id(view), account.id),
        url=f"{request.url.scheme}://{request.url.netloc}"
        + inbound_path(account.vendor, account.id),
        typed=typed or {},
        problem=problem,
    )


@router.get("/t/{tenant_id}/providers/{provider_id}/inbound")
async def inbound_secret(
    request: Request, provider_id: ProviderId, view: OwnerDep, services: ServicesDep
) -> Response:
    account = await services.providers.get(_tenant_id(view), provider_id)
    return await _page(request, view, services, account)


def given(kind: str, form: Form) -> dict[str, Any]:
    """The API's body for ``kind`` from the form; InvalidRequest for an empty field."""
    values = {f.name: form.get(f.name, f.max_length) for f in FIELDS[kind]}
    empty = next((f.label for f in FIELDS[kind] if not values[f.name].strip()), None)
    if empty is not None:
        raise InvalidRequest(f"{empty}: paste it from the provider's dashboard.")
    if kind == "basic_auth":
        return {kind: values}
    return {kind: values[kind].strip()}


@router.post("/t/{tenant_id}/providers/{provider_id}/inbound")
async def set_inbound_secret(
    request: Request,
    provider_id: ProviderId,
    view: MemberDep,
    form: OwnerFormDep,
    services: ServicesDep,
) -> Response:
    """Check and seal the account's inbound secret (replacing any)."""
    tenant_id = _tenant_id(view)
    account = await services.providers.get(tenant_id, provider_id)
    kind = KINDS.get(account.vendor)
    if kind is None:
        raise InvalidRequest(f"{account.vendor} sends no events Homing can verify.")
    plain = {f.name: form.get(f.name, f.max_length) for f in FIELDS[kind] if not f.secret}
    try:
        body = given(kind, form)
        event = services.audit.event(
            view.actor,
            AuditAction.INBOUND_SECRET_ROTATED,
            tenant_id=tenant_id,
            target_type="provider",
            target_id=provider_id,
            changes={"inbound_secret": CHANGED},
        )
        await services.inbound.secrets.put(tenant_id, provider_id, body, audit=event)
    except InvalidRequest as exc:
        said = exc.message[:1].upper() + exc.message[1:].rstrip(".") + "."
        return await _page(request, view, services, account, plain, said, status_of(exc))
    said = f"Inbound secret of {account.vendor} set: its events are verified."
    await flash(services, view, said)
    return RedirectResponse(f"/t/{tenant_id}/providers#p-{provider_id}", status_code=303)


@router.get("/t/{tenant_id}/providers/{provider_id}/inbound/remove")
async def confirm_remove(
    request: Request, provider_id: ProviderId, view: OwnerDep, services: ServicesDep
) -> Response:
    """Ask before removing: the account's events are refused from then on."""
    tenant_id = _tenant_id(view)
    account = await services.providers.get(tenant_id, provider_id)
    current = await services.inbound.secrets.get(tenant_id, provider_id)
    return render(request, "inbound_secret_remove.html", account=account, current=current)


@router.post("/t/{tenant_id}/providers/{provider_id}/inbound/remove")
async def remove_inbound_secret(
    provider_id: ProviderId, view: MemberDep, _form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Remove the secret (404 when there is none), audited as the API's twin is."""
    tenant_id = _tenant_id(view)
    account = await services.providers.get(tenant_id, provider_id)
    event = services.audit.event(
        view.actor,
        AuditAction.INBOUND_SECRET_DELETED,
        tenant_id=tenant_id,
        target_type="provider",
        target_id=provider_id,
    )
    await services.inbound.secrets.delete(tenant_id, provider_id, audit=event)
    said = f"Inbound secret of {account.vendor} removed: its events are refused now."
    await flash(services, view, said)
    return RedirectResponse(f"/t/{tenant_id}/providers#p-{provider_id}", status_code=303)
