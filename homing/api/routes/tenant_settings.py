"""The tenant's settings: read them (any key), change them (a live key only)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from homing.api.actors import actor_of
from homing.api.deps import LivePrincipalDep, PrincipalDep, ServicesDep
from homing.api.error_responses import refusals
from homing.api.middleware.body_limit import read_body
from homing.api.schemas.tenant_settings import TenantSettingsPatch, TenantSettingsPublic
from homing.errors import PayloadTooLarge, UrlRefused
from homing.managers.audit import diff
from homing.models import AuditAction

router = APIRouter(tags=["settings"])

# A settings body is a few dozen bytes; this bound leaves room for every future
# setting and keeps a hostile body from being read, let alone parsed.
MAX_SETTINGS_BODY_BYTES = 4096

# Nested bodies (``QuietHours``) are referred to in the document's components, where
# the category routes put them, rather than in a ``$defs`` of this schema's own.
_PATCH_SCHEMA = TenantSettingsPatch.model_json_schema(ref_template="#/components/schemas/{model}")
_PATCH_SCHEMA.pop("$defs", None)
_PATCH_OPENAPI = {
    "requestBody": {"required": True, "content": {"application/json": {"schema": _PATCH_SCHEMA}}}
}


@router.get("/v1/settings", response_model=TenantSettingsPublic)
async def get_settings(principal: PrincipalDep, services: ServicesDep) -> TenantSettingsPublic:
    """Every setting of the tenant, defaults included."""
    settings = await services.tenant_settings.get(principal.tenant.id)
    return TenantSettingsPublic.of(settings)


@router.patch(
    "/v1/settings",
    response_model=TenantSettingsPublic,
    openapi_extra=_PATCH_OPENAPI,
    responses=refusals(PayloadTooLarge, UrlRefused),
)
async def patch_settings(
    request: Request, principal: LivePrincipalDep, services: ServicesDep
) -> TenantSettingsPublic:
    """Change the settings named in the body, keep the others; a test key is 403.

    The caller is authenticated before the body is read, and the body is read only
    up to ``MAX_SETTINGS_BODY_BYTES``.
    """
    raw = await read_body(request.headers.raw, request.receive, MAX_SETTINGS_BODY_BYTES)
    try:
        patch = TenantSettingsPatch.model_validate_json(raw)
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_input=False)]
        raise RequestValidationError(errors) from None
    changes = patch.changes()
    before = TenantSettingsPublic.of(await services.tenant_settings.get(principal.tenant.id))
    event = services.audit.event(
        actor_of(principal),
        AuditAction.SETTINGS_UPDATED,
        tenant_id=principal.tenant.id,
        target_type="settings",
        changes=diff(before.model_dump(), changes),
    )
    settings = await services.tenant_settings.update(principal.tenant.id, changes, event)
    return TenantSettingsPublic.of(settings)
