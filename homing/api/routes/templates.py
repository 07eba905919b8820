"""Templates and their versions (docs/templates.md): create, read, version, publish,
preview, delete. Every route is the tenant's own: another tenant's template, by id or
key, is 404 as if it did not exist."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response

from homing.api.actors import actor_of
from homing.api.client_gone import GONE_STATUS, unless_gone
from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.error_responses import refusals
from homing.api.route_params import Limit, VersionId
from homing.api.schemas.shared import Page
from homing.api.schemas.templates import (
    PreviewCreate,
    PreviewPublic,
    TemplateCreate,
    TemplatePublic,
    VersionCreate,
    VersionEdit,
    VersionPublic,
)
from homing.errors import Conflict, InvalidRequest, RateLimited
from homing.rendering.kernel import TemplateError

router = APIRouter(tags=["templates"])

Ref = Annotated[str, Path(min_length=1, max_length=64, description="the template's id or key")]


@router.post(
    "/v1/templates",
    status_code=201,
    response_model=TemplatePublic,
    responses=refusals(Conflict, TemplateError),
)
async def create_template(
    body: TemplateCreate, principal: PrincipalDep, services: ServicesDep
) -> TemplatePublic:
    """A new template; 409 when the key is taken."""
    row = await services.templates.create(
        principal.tenant.id, body.key, body.name, body.default_locale, actor_of(principal)
    )
    return TemplatePublic.of(row, [])


@router.get("/v1/templates", response_model=Page[TemplatePublic])
async def list_templates(
    principal: PrincipalDep,
    services: ServicesDep,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=36)] = None,
) -> Page[TemplatePublic]:
    """The tenant's templates in creation order; pass ``next_cursor`` back as ``cursor``."""
    tenant_id = principal.tenant.id
    templates = services.templates
    rows, more = await templates.page(tenant_id, limit, cursor)
    channels = await templates.channels(tenant_id, [r.id for r in rows])
    return Page[TemplatePublic](
        data=[TemplatePublic.of(r, channels[r.id]) for r in rows],
        next_cursor=rows[-1].id if more and rows else None,
    )


@router.get("/v1/templates/{ref}", response_model=TemplatePublic)
async def get_template(ref: Ref, principal: PrincipalDep, services: ServicesDep) -> TemplatePublic:
    """One template by id or key."""
    row = await services.templates.get(principal.tenant.id, ref)
    channels = await services.templates.channels(principal.tenant.id, [row.id])
    return TemplatePublic.of(row, channels[row.id])


@router.delete("/v1/templates/{ref}", status_code=204)
async def delete_template(ref: Ref, principal: PrincipalDep, services: ServicesDep) -> Response:
    """Remove a template and every version. Jobs accepted with it keep their rendered
    content and still send; new sends naming it are 422."""
    await services.templates.delete(principal.tenant.id, ref, actor_of(principal))
    return Response(status_code=204)


@router.post(
    "/v1/templates/{ref}/versions",
    status_code=201,
    response_model=VersionPublic,
    responses=refusals(Conflict, TemplateError, RateLimited),
)
async def add_version(
    ref: Ref, body: VersionCreate, principal: PrincipalDep, services: ServicesDep
) -> VersionPublic:
    """A new draft, numbered after the last; 422 ``template_error`` when its content
    cannot render (syntax, size, nesting, an invalid ``variables`` schema, or checking it
    takes past the render budget); 429 past ``HOMING_TEMPLATE_CHECKS_PER_MINUTE``."""
    row = await services.templates.add_version(
        principal.tenant.id, ref, body.locale, body.parts(), body.variables, actor_of(principal)
    )
    return VersionPublic.of(row)


@router.get("/v1/templates/{ref}/versions", response_model=Page[VersionPublic])
async def list_versions(
    ref: Ref,
    principal: PrincipalDep,
    services: ServicesDep,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=10, pattern=r"^[0-9]+$")] = None,
) -> Page[VersionPublic]:
    """The template's versions, newest first; pass ``next_cursor`` back as ``cursor``."""
    templates = services.templates
    template = await templates.get(principal.tenant.id, ref)
    rows, more = await templates.versions(template, limit, None if cursor is None else int(cursor))
    return Page[VersionPublic](
        data=[VersionPublic.of(r) for r in rows],
        next_cursor=str(rows[-1].number) if more and rows else None,
    )


@router.get("/v1/templates/{ref}/versions/{version_id}", response_model=VersionPublic)
async def get_version(
    ref: Ref, version_id: VersionId, principal: PrincipalDep, services: ServicesDep
) -> VersionPublic:
    """One version of the template."""
    templates = services.templates
    template = await templates.get(principal.tenant.id, ref)
    return VersionPublic.of(await templates.version(template, version_id))


@router.patch(
    "/v1/templates/{ref}/versions/{version_id}",
    response_model=VersionPublic,
    responses=refusals(Conflict, TemplateError, RateLimited),
)
async def edit_version(
    ref: Ref,
    version_id: VersionId,
    body: VersionEdit,
    principal: PrincipalDep,
    services: ServicesDep,
) -> VersionPublic:
    """Change a draft: each channel given replaces that part (null removes it),
    ``variables`` replaces the schema. A published version is 409: add a new one; 429
    past ``HOMING_TEMPLATE_CHECKS_PER_MINUTE``, as a new version."""
    if not body.model_fields_set:
        raise InvalidRequest("nothing to change")
    variables = (body.variables,) if "variables" in body.model_fields_set else None
    row = await services.templates.edit_version(
        principal.tenant.id,
        ref,
        version_id,
        body.locale,
        body.parts(only_set=True),
        variables,
        actor_of(principal),
    )
    return VersionPublic.of(row)


@router.post(
    "/v1/templates/{ref}/versions/{version_id}/publish",
    response_model=VersionPublic,
    responses=refusals(Conflict),
)
async def publish_version(
    ref: Ref, version_id: VersionId, principal: PrincipalDep, services: ServicesDep
) -> VersionPublic:
    """Make the version its locale's live one (the one before is retired). Jobs already
    accepted keep the content they were rendered with."""
    row = await services.templates.publish(
        principal.tenant.id, ref, version_id, actor_of(principal)
    )
    return VersionPublic.of(row)


@router.post(
    "/v1/templates/{ref}/preview",
    response_model=PreviewPublic,
    responses=refusals(TemplateError, RateLimited),
)
async def preview(
    ref: Ref, body: PreviewCreate, request: Request, principal: PrincipalDep, services: ServicesDep
) -> PreviewPublic | Response:
    """Every part rendered with ``data``: the live version for ``locale``, or the
    version numbered ``version`` (a draft too). The same 422 a send would get; 429 past
    ``HOMING_TEMPLATE_CHECKS_PER_MINUTE``. A preview whose client leaves is stopped."""
    previewed = await unless_gone(
        request,
        services.templates.preview(principal.tenant.id, ref, body.data, body.locale, body.version),
    )
    if previewed is None:
        return Response(status_code=GONE_STATUS)
    version, parts = previewed
    return PreviewPublic(
        template_id=version.template_id, version=version.number, locale=version.locale, **parts
    )
