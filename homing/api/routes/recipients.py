"""The tenant's recipients (``/v1/recipients``) and their preferences
(``/v1/recipients/{external_id}/preferences``): docs/recipients.md.

A recipient is named in every path by the tenant's ``external_id``; another tenant's
is not found (404), never shown.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from homing.api.actors import actor_of
from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.error_responses import refusals
from homing.api.schemas.erasure import ErasureCreate, ErasurePublic
from homing.api.schemas.recipients import (
    PreferenceLink,
    Preferences,
    RecipientPublic,
    RecipientPut,
)
from homing.api.schemas.shared import Page
from homing.channels import Channel
from homing.errors import PublicUrlRequired, QuotaExceeded, RateLimited, UnknownCategory
from homing.managers.recipients import EXTERNAL_ID
from homing.models import AuditAction

router = APIRouter(tags=["recipients"])

ExternalIdPath = Annotated[str, Path(pattern=f"^{EXTERNAL_ID}$")]


@router.put(
    "/v1/recipients/{external_id}",
    response_model=RecipientPublic,
    responses=refusals(QuotaExceeded, UnknownCategory),
)
async def put_recipient(
    external_id: ExternalIdPath,
    body: RecipientPut,
    principal: PrincipalDep,
    services: ServicesDep,
    response: Response,
) -> RecipientPublic:
    """Create the recipient (201) or change the fields given (200; the others kept)."""
    changes = body.changes()
    event = services.audit.event(
        actor_of(principal),
        AuditAction.RECIPIENT_UPDATED,
        tenant_id=principal.tenant.id,
        target_type="recipient",
        changes={"fields": sorted(changes)},
    )
    recipient, created = await services.recipients.put(
        principal.tenant.id, external_id, changes, event
    )
    response.status_code = 201 if created else 200
    return RecipientPublic.of(recipient)


@router.get("/v1/recipients/{external_id}", response_model=RecipientPublic)
async def get_recipient(
    external_id: ExternalIdPath, principal: PrincipalDep, services: ServicesDep
) -> RecipientPublic:
    """One recipient; 404 when the tenant has none of this external id."""
    return RecipientPublic.of(await services.recipients.get(principal.tenant.id, external_id))


@router.get("/v1/recipients", response_model=Page[RecipientPublic])
async def list_recipients(
    principal: PrincipalDep,
    services: ServicesDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=255)] = None,
) -> Page[RecipientPublic]:
    """Recipients by external id; pass ``next_cursor`` back as ``cursor``."""
    page = await services.recipients.page(principal.tenant.id, limit=limit, cursor=cursor)
    return Page[RecipientPublic](
        data=[RecipientPublic.of(r) for r in page.entries], next_cursor=page.next_cursor
    )


@router.delete(
    "/v1/recipients/{external_id}", response_model=ErasurePublic, responses=refusals(RateLimited)
)
async def delete_recipient(
    external_id: ExternalIdPath, principal: PrincipalDep, services: ServicesDep, response: Response
) -> ErasurePublic:
    """Erase the recipient: its row, preferences and feed, and its addresses' traces in
    jobs, dead letters, inbound events and flashes (docs/recipients.md, "Erasure").
    200 when complete; 202 when work is left (jobs still queued, or the call's batches
    spent): call again to finish. 404 when there is none."""
    report = await services.erasure.erase_recipient(
        actor_of(principal), principal.tenant.id, external_id
    )
    response.status_code = 200 if report.complete else 202
    return ErasurePublic.of(report)


@router.post("/v1/erasure", response_model=ErasurePublic, responses=refusals(RateLimited))
async def erase_address(
    body: ErasureCreate, principal: PrincipalDep, services: ServicesDep, response: Response
) -> ErasurePublic:
    """Erase one address on one channel from the tenant's data; its suppressions and
    opt-outs stay as keyed hashes. 200 when complete, 202 when work is left."""
    report = await services.erasure.erase_address(
        actor_of(principal), principal.tenant.id, Channel(body.channel), body.address
    )
    response.status_code = 200 if report.complete else 202
    return ErasurePublic.of(report)


@router.get("/v1/recipients/{external_id}/preferences", response_model=Preferences)
async def get_preferences(
    external_id: ExternalIdPath, principal: PrincipalDep, services: ServicesDep
) -> Preferences:
    """Whether the recipient gets each category on each channel: its own choice,
    else the category's default."""
    chosen = await services.recipients.preferences(principal.tenant.id, external_id)
    return Preferences.model_construct(categories=chosen)


@router.patch(
    "/v1/recipients/{external_id}/preferences",
    response_model=Preferences,
    responses=refusals(UnknownCategory),
)
async def patch_preferences(
    external_id: ExternalIdPath, body: Preferences, principal: PrincipalDep, services: ServicesDep
) -> Preferences:
    """Set the choices given (the others kept) and answer the preferences; 422
    ``unknown_category`` for a key the tenant has no category of."""
    changes = {
        key: {str(channel): allowed for channel, allowed in channels.items()}
        for key, channels in body.categories.items()
    }
    event = services.audit.event(
        actor_of(principal),
        AuditAction.RECIPIENT_PREFERENCES_CHANGED,
        tenant_id=principal.tenant.id,
        target_type="recipient",
        changes={"categories": {key: sorted(channels) for key, channels in changes.items()}},
    )
    chosen = await services.recipients.choose(principal.tenant.id, external_id, changes, event)
    return Preferences.model_construct(categories=chosen)


@router.get(
    "/v1/recipients/{external_id}/preference-link",
    response_model=PreferenceLink,
    responses=refusals(PublicUrlRequired),
)
async def get_preference_link(
    external_id: ExternalIdPath, principal: PrincipalDep, services: ServicesDep
) -> PreferenceLink:
    """A signed link to the recipient's preference page (the template variable
    ``preferences_url`` is one too); 422 ``public_url_required`` without
    HOMING_PUBLIC_URL."""
    tenant_id = principal.tenant.id
    recipient = await services.recipients.get(tenant_id, external_id)
    links = services.optouts.for_send(tenant_id, "email", None, recipient.id, None)
    if links is None or links.preferences_url is None:
        raise PublicUrlRequired("the preference page's link is built on HOMING_PUBLIC_URL")
    return PreferenceLink(url=links.preferences_url)
