"""The tenant's categories of notification (``/v1/categories``): docs/recipients.md."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from homing.api.actors import actor_of
from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.error_responses import refusals
from homing.api.schemas.recipients import CategoryPublic, CategoryPut
from homing.api.schemas.shared import Page
from homing.errors import QuotaExceeded
from homing.managers.recipients import CATEGORY_KEY
from homing.models import AuditAction

router = APIRouter(tags=["recipients"])

KeyPath = Annotated[str, Path(pattern=f"^{CATEGORY_KEY}$")]


@router.put(
    "/v1/categories/{key}", response_model=CategoryPublic, responses=refusals(QuotaExceeded)
)
async def put_category(
    key: KeyPath,
    body: CategoryPut,
    principal: PrincipalDep,
    services: ServicesDep,
    response: Response,
) -> CategoryPublic:
    """Create the category (201) or replace it (200)."""
    values = body.values()
    event = services.audit.event(
        actor_of(principal),
        AuditAction.CATEGORY_UPDATED,
        tenant_id=principal.tenant.id,
        target_type="category",
        target_id=key,
        changes={"fields": sorted(k for k, v in values.items() if v is not None)},
    )
    category, created = await services.recipients.put_category(
        principal.tenant.id, key, values, event
    )
    response.status_code = 201 if created else 200
    return CategoryPublic.of(category)


@router.get("/v1/categories/{key}", response_model=CategoryPublic)
async def get_category(
    key: KeyPath, principal: PrincipalDep, services: ServicesDep
) -> CategoryPublic:
    """One category; 404 when the tenant has none of this key."""
    return CategoryPublic.of(await services.recipients.category(principal.tenant.id, key))


@router.get("/v1/categories", response_model=Page[CategoryPublic])
async def list_categories(
    principal: PrincipalDep,
    services: ServicesDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
) -> Page[CategoryPublic]:
    """Categories by key; pass ``next_cursor`` back as ``cursor``."""
    page = await services.recipients.categories(principal.tenant.id, limit=limit, cursor=cursor)
    return Page[CategoryPublic](
        data=[CategoryPublic.of(c) for c in page.entries], next_cursor=page.next_cursor
    )
