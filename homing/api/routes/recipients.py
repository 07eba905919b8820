"""The tenant's recipients (``/v1/recipients``) and their preferences
(``/v1/recipients/{external_id}/preferences``): docs/recipients.md.

A recipient is named in every path by the tenant's ``external_id``; another tenant's
is not found (404), never shown.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.schemas.recipients import Preferences, RecipientPublic, RecipientPut
from homing.api.schemas.shared import Page
from homing.managers.recipients import EXTERNAL_ID

router = APIRouter(tags=["recipients"])

ExternalIdPath = Annotated[str, Path(pattern=f"^{EXTERNAL_ID}$")]


@router.put("/v1/recipients/{external_id}", response_model=RecipientPublic)
async def put_recipient(
    external_id: ExternalIdPath,
    body: RecipientPut,
    principal: PrincipalDep,
    services: ServicesDep,
    response: Response,
) -> RecipientPublic:
    """Create the recipient (201) or change the fields given (200; the others kept)."""
    recipient, created = await services.recipients.put(
        principal.tenant.id, external_id, body.changes()
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


@router.delete("/v1/recipients/{external_id}", status_code=204)
async def delete_recipient(
    external_id: ExternalIdPath, principal: PrincipalDep, services: ServicesDep
) -> Response:
    """Delete the recipient and its preferences; 404 when there is none. Its traces in
    jobs, dead letters and events stay until erasure (a later slice)."""
    await services.recipients.delete(principal.tenant.id, external_id)
    return Response(status_code=204)


@router.get("/v1/recipients/{external_id}/preferences", response_model=Preferences)
async def get_preferences(
    external_id: ExternalIdPath, principal: PrincipalDep, services: ServicesDep
) -> Preferences:
    """Whether the recipient gets each category on each channel: its own choice,
    else the category's default."""
    chosen = await services.recipients.preferences(principal.tenant.id, external_id)
    return Preferences.model_construct(categories=chosen)


@router.patch("/v1/recipients/{external_id}/preferences", response_model=Preferences)
async def patch_preferences(
    external_id: ExternalIdPath, body: Preferences, principal: PrincipalDep, services: ServicesDep
) -> Preferences:
    """Set the choices given (the others kept) and answer the preferences; 422
    ``unknown_category`` for a key the tenant has no category of."""
    changes = {
        key: {str(channel): allowed for channel, allowed in channels.items()}
        for key, channels in body.categories.items()
    }
    chosen = await services.recipients.choose(principal.tenant.id, external_id, changes)
    return Preferences.model_construct(categories=chosen)
