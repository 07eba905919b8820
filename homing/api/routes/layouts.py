"""Email layouts and their versions (docs/templates.md, "Layouts"): create, read,
version, publish, delete, in the shapes of the template routes. Every route is the
tenant's own: another tenant's layout, by id or key, is 404 as if it did not exist."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from homing.api.actors import actor_of
from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.error_responses import refusals
from homing.api.route_params import Limit, VersionId
from homing.api.schemas.layouts import (
    LayoutCreate,
    LayoutPublic,
    LayoutVersionCreate,
    LayoutVersionEdit,
    LayoutVersionPublic,
)
from homing.api.schemas.shared import Page
from homing.errors import Conflict, InvalidRequest, RateLimited
from homing.rendering.kernel import TemplateError

router = APIRouter(tags=["layouts"])

Ref = Annotated[str, Path(min_length=1, max_length=64, description="the layout's id or key")]


@router.post(
    "/v1/layouts",
    status_code=201,
    response_model=LayoutPublic,
    responses=refusals(Conflict, TemplateError),
)
async def create_layout(
    body: LayoutCreate, principal: PrincipalDep, services: ServicesDep
) -> LayoutPublic:
    """A new layout (``default``: the one emails naming none go in); 409 when the key is
    taken or the tenant holds ``HOMING_LAYOUT_MAX_LAYOUTS``."""
    row = await services.layouts.create(
        principal.tenant.id, body.key, body.name, body.default_locale, actor_of(principal)
    )
    return LayoutPublic.of(row, [])


@router.get("/v1/layouts", response_model=Page[LayoutPublic])
async def list_layouts(
    principal: PrincipalDep,
    services: ServicesDep,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=36)] = None,
) -> Page[LayoutPublic]:
    """The tenant's layouts in creation order; pass ``next_cursor`` back as ``cursor``."""
    layouts = services.layouts
    rows, more = await layouts.page(principal.tenant.id, limit, cursor)
    locales = await layouts.locales(principal.tenant.id, [r.id for r in rows])
    return Page[LayoutPublic](
        data=[LayoutPublic.of(r, locales[r.id]) for r in rows],
        next_cursor=rows[-1].id if more and rows else None,
    )


@router.get("/v1/layouts/{ref}", response_model=LayoutPublic)
async def get_layout(ref: Ref, principal: PrincipalDep, services: ServicesDep) -> LayoutPublic:
    """One layout by id or key."""
    row = await services.layouts.get(principal.tenant.id, ref)
    locales = await services.layouts.locales(principal.tenant.id, [row.id])
    return LayoutPublic.of(row, locales[row.id])


@router.delete("/v1/layouts/{ref}", status_code=204)
async def delete_layout(ref: Ref, principal: PrincipalDep, services: ServicesDep) -> Response:
    """Remove a layout and every version. Jobs accepted with it keep their rendered
    content; a templated email naming it is 422 afterwards."""
    await services.layouts.delete(principal.tenant.id, ref, actor_of(principal))
    return Response(status_code=204)


@router.post(
    "/v1/layouts/{ref}/versions",
    status_code=201,
    response_model=LayoutVersionPublic,
    responses=refusals(Conflict, TemplateError, RateLimited),
)
async def add_layout_version(
    ref: Ref, body: LayoutVersionCreate, principal: PrincipalDep, services: ServicesDep
) -> LayoutVersionPublic:
    """A new draft, numbered after the last; 422 ``template_error`` when the HTML does
    not parse, is too big or never shows ``{{ content }}``; 429 past
    ``HOMING_TEMPLATE_CHECKS_PER_MINUTE`` (template and layout writes and previews)."""
    row = await services.layouts.add_version(
        principal.tenant.id, ref, body.locale, {"html": body.html}, None, actor_of(principal)
    )
    return LayoutVersionPublic.of(row)


@router.get("/v1/layouts/{ref}/versions", response_model=Page[LayoutVersionPublic])
async def list_layout_versions(
    ref: Ref,
    principal: PrincipalDep,
    services: ServicesDep,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=10, pattern=r"^[0-9]+$")] = None,
) -> Page[LayoutVersionPublic]:
    """The layout's versions, newest first; pass ``next_cursor`` back as ``cursor``."""
    layouts = services.layouts
    layout = await layouts.get(principal.tenant.id, ref)
    rows, more = await layouts.versions(layout, limit, None if cursor is None else int(cursor))
    return Page[LayoutVersionPublic](
        data=[LayoutVersionPublic.of(r) for r in rows],
        next_cursor=str(rows[-1].number) if more and rows else None,
    )


@router.get("/v1/layouts/{ref}/versions/{version_id}", response_model=LayoutVersionPublic)
async def get_layout_version(
    ref: Ref, version_id: VersionId, principal: PrincipalDep, services: ServicesDep
) -> LayoutVersionPublic:
    """One version of the layout."""
    layouts = services.layouts
    layout = await layouts.get(principal.tenant.id, ref)
    return LayoutVersionPublic.of(await layouts.version(layout, version_id))


@router.patch(
    "/v1/layouts/{ref}/versions/{version_id}",
    response_model=LayoutVersionPublic,
    responses=refusals(Conflict, TemplateError, RateLimited),
)
async def edit_layout_version(
    ref: Ref,
    version_id: VersionId,
    body: LayoutVersionEdit,
    principal: PrincipalDep,
    services: ServicesDep,
) -> LayoutVersionPublic:
    """Change a draft's ``html`` or ``locale``. A published version is 409: add a new one;
    429 past ``HOMING_TEMPLATE_CHECKS_PER_MINUTE``."""
    if body.html is None and body.locale is None:
        raise InvalidRequest("nothing to change")
    parts: dict[str, Any] = {} if body.html is None else {"html": body.html}
    row = await services.layouts.edit_version(
        principal.tenant.id, ref, version_id, body.locale, parts, None, actor_of(principal)
    )
    return LayoutVersionPublic.of(row)


@router.post(
    "/v1/layouts/{ref}/versions/{version_id}/publish",
    response_model=LayoutVersionPublic,
    responses=refusals(Conflict),
)
async def publish_layout_version(
    ref: Ref, version_id: VersionId, principal: PrincipalDep, services: ServicesDep
) -> LayoutVersionPublic:
    """Make the version its locale's live one (the one before is retired; publishing a
    retired one again is a rollback). Jobs already accepted keep their content."""
    row = await services.layouts.publish(principal.tenant.id, ref, version_id, actor_of(principal))
    return LayoutVersionPublic.of(row)
