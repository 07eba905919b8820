"""A tenant's sending domains: registered with one of the tenant's email providers (the
provider is asked, under its deadline, by ``homing.managers.sending_domains``), their DNS
records with copy buttons (the script enhances; the values are plain text to select
without it), "verify now", and removal (asked first, then forgotten as ``DELETE
/v1/domains/{id}`` does; the provider keeps its own registration). A change answers
303 to the page with a flash saying what was done; a refused one shows the form again,
what was typed kept and the reason beside the field.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated

from fastapi import APIRouter, Path
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.channels import Channel
from homing.console.access import MemberDep, OwnerDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.routing import ConsoleRoute, status_of
from homing.console.templating import render
from homing.domain.domain_rows import SendingDomain
from homing.errors import Conflict, HomingError, InvalidRequest, QuotaExceeded
from homing.models import AuditAction
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

DomainId = Annotated[str, Path(min_length=1, max_length=36)]


def _tenant_id(view: View) -> str:
    assert view.seat is not None
    return view.seat.tenant.id


@dataclass(frozen=True, slots=True)
class DomainForm:
    """The add-a-domain form as typed (shown again), and what was wrong with it."""

    domain: str = ""
    provider_account_id: str = ""
    problem: str | None = None


async def _domains_page(
    request: Request, view: View, services: Services, typed: DomainForm, status: int = 200
) -> Response:
    tenant_id = _tenant_id(view)
    found = await services.domains.all(tenant_id)
    email = await services.providers.all(tenant_id, Channel.EMAIL)
    return render(request, "domains.html", status, domains=found, providers=email, typed=typed)


@router.get("/t/{tenant_id}/domains")
async def domains(request: Request, view: MemberDep, services: ServicesDep) -> Response:
    return await _domains_page(request, view, services, DomainForm())


@router.post("/t/{tenant_id}/domains")
async def add_domain(
    request: Request, view: MemberDep, form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Register a domain with one of the tenant's email providers; a refusal shows the
    form again with what was typed and why, next to the field."""
    tenant_id = _tenant_id(view)
    typed = DomainForm(form.get("domain", 253).strip(), form.get("provider_account_id", 36))
    try:
        domain = await _register(services, view, tenant_id, typed)
    except (InvalidRequest, Conflict, QuotaExceeded) as exc:
        refused = replace(typed, problem=_domain_problem(exc))
        return await _domains_page(request, view, services, refused, status_of(exc))
    said = f"Domain {domain.domain} added: publish its DNS records, then verify it."
    if len(await services.domains.all(tenant_id)) == 1:
        said += " Until a domain is verified, every email this tenant sends is refused."
    await flash(services, view, said)
    return RedirectResponse(f"/t/{tenant_id}/domains#d-{domain.id}", status_code=303)


def _domain_problem(exc: HomingError) -> str:
    if exc.message == "not a domain name":
        return "Not a domain name: type one like mail.example.com."
    if isinstance(exc, QuotaExceeded):
        return exc.message[:1].upper() + exc.message[1:] + ": remove one to make room."
    return exc.message[:1].upper() + exc.message[1:] + "."


async def _register(
    services: Services, view: View, tenant_id: str, typed: DomainForm
) -> SendingDomain:
    if not typed.domain or not typed.provider_account_id:
        raise InvalidRequest("name the domain and choose the provider that sends from it")
    event = services.audit.event(
        view.actor,
        AuditAction.DOMAIN_ADDED,
        tenant_id=tenant_id,
        target_type="domain",
        changes={"domain": typed.domain, "provider_account_id": typed.provider_account_id},
    )
    return await services.domains.register(
        tenant_id, typed.domain, typed.provider_account_id, event
    )


@router.post("/t/{tenant_id}/domains/{domain_id}/verify")
async def verify_domain(
    domain_id: DomainId, view: MemberDep, _form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Ask the provider to check the domain's DNS records now."""
    tenant_id = _tenant_id(view)
    domain = await services.domains.verify(tenant_id, domain_id)
    await flash(services, view, f"Domain {domain.domain} checked: {domain.status.value}.")
    return RedirectResponse(f"/t/{tenant_id}/domains#d-{domain_id}", status_code=303)


@router.get("/t/{tenant_id}/domains/{domain_id}/remove")
async def confirm_remove(
    request: Request, domain_id: DomainId, view: OwnerDep, services: ServicesDep
) -> Response:
    """Ask before removing: what changes for the tenant's sends once it is gone."""
    tenant_id = _tenant_id(view)
    domain = await services.domains.get(tenant_id, domain_id)
    others = [d for d in await services.domains.all(tenant_id) if d.id != domain_id]
    return render(request, "domain_remove.html", domain=domain, last=not others)


@router.post("/t/{tenant_id}/domains/{domain_id}/remove")
async def remove_domain(
    domain_id: DomainId, view: MemberDep, _form: OwnerFormDep, services: ServicesDep
) -> Response:
    """Forget the domain in Homing, audited as ``DELETE /v1/domains/{id}`` is."""
    tenant_id = _tenant_id(view)
    domain = await services.domains.get(tenant_id, domain_id)
    event = services.audit.event(
        view.actor,
        AuditAction.DOMAIN_REMOVED,
        tenant_id=tenant_id,
        target_type="domain",
        target_id=domain_id,
    )
    await services.domains.delete(tenant_id, domain_id, event)
    said = f"Domain {domain.domain} removed from Homing; {domain.provider} keeps its registration."
    await flash(services, view, said)
    return RedirectResponse(f"/t/{tenant_id}/domains", status_code=303)
