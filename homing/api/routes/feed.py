"""The tenant's side of the in-app feed (docs/feed.md): send an item, read a
recipient's feed, get a token for it, rotate the feed secret, set allowed origins.

An in-app send is COMPLETED as it is accepted: its item and its job commit together
(``homing.managers.feed.Feed.send``), so ``GET /v1/jobs/{id}`` shows it like any send
and no worker is woken.
"""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Path, Query, Request, Response

from homing.api.actors import actor_of
from homing.api.deps import SENDING_OPENAPI, PrincipalDep, ServicesDep, sending
from homing.api.error_responses import refusals
from homing.api.routes.email import IdempotencyKey, request_hash
from homing.api.schemas.email import Queued
from homing.api.schemas.feed import (
    FeedOrigins,
    FeedPagePublic,
    FeedSecretIssued,
    FeedToken,
    InAppCreate,
)
from homing.api.templated import render_one
from homing.channels import Channel
from homing.domain.accepting import NewJob
from homing.domain.feed import FeedContent
from homing.domain.preferences import PreferenceCheck
from homing.domain.tenants import Principal
from homing.errors import (
    IdempotencyConflict,
    NotFound,
    QuotaExceeded,
    UnknownCategory,
    UnknownRecipient,
)
from homing.managers.audit import CHANGED
from homing.managers.feed import FeedReader
from homing.managers.recipients import EXTERNAL_ID
from homing.models import QUEUE_FOR_CHANNEL, AuditAction, Priority
from homing.rendering.kernel import TemplateError
from homing.services import Services

router = APIRouter(tags=["feed"])


async def _sender(request: Request) -> Principal:
    """The admitted caller, its key's scope checked before the body is: a test key is
    refused (403) whatever it sent, as on every live-only route."""
    principal, _ = sending(request)
    return principal


SenderDep = Annotated[Principal, Depends(_sender)]

ExternalIdPath = Annotated[str, Path(pattern=f"^{EXTERNAL_ID}$")]
_NO_STORE = {"Cache-Control": "no-store"}


async def _addressed(services: Services, tenant_id: str, body: InAppCreate) -> FeedReader:
    """The recipient the item is for (UnknownRecipient, UnknownCategory refused)."""
    try:
        reader = await services.feed.reader_of(tenant_id, body.recipient)
    except NotFound:
        raise UnknownRecipient(
            "no recipient has this external id", {"field": "recipient"}
        ) from None
    if body.category is not None:
        try:
            await services.recipients.category(tenant_id, body.category)
        except NotFound:
            raise UnknownCategory(
                "the tenant has no category of this key", {"field": "category"}
            ) from None
    return reader


@router.post(
    "/v1/notifications/in-app",
    status_code=202,
    response_model=Queued,
    openapi_extra=SENDING_OPENAPI,
    responses=refusals(
        IdempotencyConflict, QuotaExceeded, UnknownRecipient, UnknownCategory, TemplateError
    ),
)
async def send_in_app(
    principal: SenderDep,
    body: InAppCreate,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """Put one item in a recipient's feed; answered 202 once it is committed, its job
    COMPLETED (SUPPRESSED when the recipient opted out of the category in-app)."""
    services: Services = request.app.state.services
    tenant = principal.tenant
    reader = await _addressed(services, tenant.id, body)
    fields = body.model_dump(exclude_none=True)
    fingerprint = request_hash(
        services.sealer, orjson.dumps({"in_app": fields}, option=orjson.OPT_SORT_KEYS)
    )
    text: dict[str, Any] = {"title": body.title, "body": body.body, "url": body.url}
    template = None
    if body.template is not None:
        rendered = await render_one(services, tenant.id, body, "in_app")
        text, template = rendered.part, rendered.template
    content = FeedContent(
        recipient_id=reader.recipient_id,
        body=text["body"],
        title=text["title"],
        url=text["url"],
        category=body.category,
        data=body.data,
    )
    new = NewJob(
        tenant_id=tenant.id,
        channel=Channel.IN_APP,
        queue=QUEUE_FOR_CHANNEL[Channel.IN_APP],
        priority=Priority.NORMAL,
        payload={
            "recipient": reader.external_id,
            "category": body.category,
            **({} if template is None else {"template": template}),
        },
        idempotency_key=idempotency_key,
        request_hash=fingerprint.stored,
        request_aliases=fingerprint.accepted,
        preference=(
            None if body.category is None else PreferenceCheck(reader.recipient_id, body.category)
        ),
    )
    quotas = services.admission.limits(tenant).quotas_for(Channel.IN_APP)
    accepted = await services.feed.send(new, content, quotas)
    answer = orjson.dumps({"id": accepted.job.id, "status": accepted.job.status.value})
    headers = {"Idempotent-Replayed": "true"} if accepted.replayed else None
    return Response(answer, 202, headers, media_type="application/json")


@router.get("/v1/recipients/{external_id}/feed", response_model=FeedPagePublic)
async def recipient_feed(
    external_id: ExternalIdPath,
    principal: PrincipalDep,
    services: ServicesDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=20)] = None,
) -> FeedPagePublic:
    """The recipient's feed newest first (archived items left out), with its unread count."""
    reader = await services.feed.reader_of(principal.tenant.id, external_id)
    return FeedPagePublic.of(await services.feed.page(reader, limit, cursor))


@router.get("/v1/recipients/{external_id}/feed-token", response_model=FeedToken)
async def recipient_feed_token(
    external_id: ExternalIdPath,
    principal: PrincipalDep,
    services: ServicesDep,
    response: Response,
    ttl_seconds: Annotated[int, Query(ge=60, le=2_592_000)] = 86_400,
) -> FeedToken:
    """A token for the recipient's feed (at most HOMING_FEED_TOKEN_MAX_SECONDS); a
    tenant's server can sign the same itself (docs/feed.md, "Tokens")."""
    reader = await services.feed.reader_of(principal.tenant.id, external_id)
    token, expires_at = await services.feed.token(reader, ttl_seconds)
    response.headers.update(_NO_STORE)
    return FeedToken(token=token, expires_at=expires_at)


@router.post("/v1/feed-secret/rotate", response_model=FeedSecretIssued)
async def rotate_feed_secret(
    principal: PrincipalDep, services: ServicesDep, response: Response
) -> FeedSecretIssued:
    """A new feed secret, shown this once; tokens signed with the old one stop working."""
    event = services.audit.event(
        actor_of(principal),
        AuditAction.FEED_SECRET_ROTATED,
        tenant_id=principal.tenant.id,
        target_type="feed_secret",
        changes={"secret": CHANGED},
    )
    issued = await services.feed.rotate(principal.tenant.id, event)
    response.headers.update(_NO_STORE)
    return FeedSecretIssued.of(issued)


@router.get("/v1/feed-origins", response_model=FeedOrigins)
async def get_feed_origins(principal: PrincipalDep, services: ServicesDep) -> FeedOrigins:
    """The origins whose pages may call ``/feed`` (CORS)."""
    return FeedOrigins(origins=await services.feed.origins(principal.tenant.id))


@router.put("/v1/feed-origins", response_model=FeedOrigins)
async def put_feed_origins(
    body: FeedOrigins, principal: PrincipalDep, services: ServicesDep
) -> FeedOrigins:
    """Replace the allowed origins (exact ``scheme://host[:port]``, HOMING_FEED_MAX_ORIGINS)."""
    event = services.audit.event(
        actor_of(principal),
        AuditAction.SETTINGS_UPDATED,
        tenant_id=principal.tenant.id,
        target_type="settings",
        changes={"feed_origins": CHANGED},
    )
    origins = await services.feed.set_origins(principal.tenant.id, body.origins, event)
    return FeedOrigins(origins=origins)
