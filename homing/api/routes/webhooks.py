"""Outbound webhooks: accept one, manage the signing secret, re-enable gone URLs."""

from __future__ import annotations

import json

from fastapi import APIRouter, Request, Response

from homing.api.actors import actor_of
from homing.api.deps import SENDING_OPENAPI, PrincipalDep, ServicesDep, sending
from homing.api.error_responses import refusals
from homing.api.routes.email import (
    IdempotencyKey,
    queued,
    request_hash,
    requested_priority,
)
from homing.api.schemas.email import Queued
from homing.api.schemas.shared import Page
from homing.api.schemas.webhooks import (
    EndpointUrl,
    GoneEndpointPublic,
    WebhookCreate,
    WebhookSecretIssued,
    WebhookSecretStatus,
)
from homing.api.templated import render_one
from homing.channels import Channel
from homing.domain.accepting import NewJob
from homing.domain.audit import AuditEvent
from homing.domain.tenants import Principal
from homing.errors import (
    Conflict,
    IdempotencyConflict,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    QuotaExceeded,
    SendAtTooFar,
    UrlRefused,
)
from homing.managers.audit import CHANGED
from homing.managers.webhook_secrets import IssuedSecret
from homing.models import QUEUE_FOR_CHANNEL, AuditAction
from homing.rendering.kernel import TemplateError
from homing.services import Services
from homing.webhooks.message import write_message

router = APIRouter(tags=["webhooks"])

_NO_STORE = {"Cache-Control": "no-store"}


def _body(payload: object, limit: int) -> bytes:
    """The exact bytes that will be sent and signed, within the size limit."""
    try:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        body = text.encode()
    except ValueError:  # NaN, Infinity, or a lone surrogate that UTF-8 cannot carry
        raise InvalidRequest(
            "'payload' must be JSON without NaN, Infinity or lone surrogates"
        ) from None
    if len(body) > limit:
        raise PayloadTooLarge(
            f"the payload is {len(body)} bytes; the limit is {limit}",
            {"limit": limit, "size": len(body)},
        )
    return body


def _canonical(body: WebhookCreate) -> bytes:
    # The stdlib encoder, as for the body: orjson refuses integers beyond 64 bits.
    # A field added later (``ttl_seconds``, ``template``…) is left out while unset, so the hashes
    # stored before it still match their repeats.
    later = ("ttl_seconds", "template", "data", "locale", "send_at")
    fields = body.model_dump(exclude={f for f in later if getattr(body, f) is None} or None)
    if body.send_at is not None:
        fields["send_at"] = body.send_at.isoformat()  # in UTC: one moment, one hash
    return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()


@router.post(
    "/v1/notifications/webhook",
    status_code=202,
    response_model=Queued,
    openapi_extra=SENDING_OPENAPI,
    responses=refusals(
        IdempotencyConflict, QuotaExceeded, UrlRefused, PayloadTooLarge, SendAtTooFar, TemplateError
    ),
)
async def send_webhook(
    body: WebhookCreate, request: Request, idempotency_key: IdempotencyKey = None
) -> Response:
    """Queue one webhook to ``url``; answered 202 once the job is committed.

    Admission (key, suspension, rate) ran in the ``SendingAdmission`` middleware;
    ``Admission.accept`` applies the plan and counts the webhook quota.
    """
    principal, services = sending(request)
    tenant = principal.tenant
    webhooks = services.webhooks
    url = webhooks.check_url(body.url)
    rendered = None
    if body.template is not None:
        rendered = await render_one(services, tenant.id, body, "webhook")
    content = body.payload if rendered is None else rendered.part["payload"]
    raw = _body(content, webhooks.max_payload_bytes)
    payload = write_message(services.sealer, tenant.id, url, raw, body.headers, body.event_type)
    if rendered is not None:
        payload["template"] = rendered.template
    fingerprint = request_hash(services.sealer, _canonical(body))
    accepted = await services.admission.accept(
        principal,
        NewJob(
            tenant_id=tenant.id,
            channel=Channel.WEBHOOK,
            queue=QUEUE_FOR_CHANNEL[Channel.WEBHOOK],
            priority=requested_priority(body.priority),
            payload=payload,
            ordering_key=body.ordering_key,
            ttl_seconds=body.ttl_seconds,
            idempotency_key=idempotency_key,
            request_hash=fingerprint.stored,
            request_aliases=fingerprint.accepted,
            send_at=None if body.send_at is None else body.send_at.timestamp(),
        ),
    )
    return queued(services, accepted)


def _secret_event(services: Services, principal: Principal, action: AuditAction) -> AuditEvent:
    return services.audit.event(
        actor_of(principal),
        action,
        tenant_id=principal.tenant.id,
        target_type="webhook_secret",
        changes={"secret": CHANGED},
    )


def _issued(issued: IssuedSecret, response: Response) -> WebhookSecretIssued:
    response.headers.update(_NO_STORE)
    return WebhookSecretIssued(
        secret=issued.secret,
        preview=issued.preview,
        created_at=issued.created_at,
        previous_expires_at=issued.previous_expires_at,
    )


@router.post(
    "/v1/webhook-secret",
    status_code=201,
    response_model=WebhookSecretIssued,
    responses=refusals(Conflict),
)
async def create_secret(
    principal: PrincipalDep, services: ServicesDep, response: Response
) -> WebhookSecretIssued:
    """Generate the signing secret; shown in this response only. 409 if one exists."""
    event = _secret_event(services, principal, AuditAction.WEBHOOK_SECRET_CREATED)
    issued = await services.webhooks.secrets.create(principal.tenant.id, event)
    return _issued(issued, response)


@router.get("/v1/webhook-secret", response_model=WebhookSecretStatus)
async def get_secret(principal: PrincipalDep, services: ServicesDep) -> WebhookSecretStatus:
    """Whether a secret is configured, when it was created, and a masked preview."""
    status = await services.webhooks.secrets.status(principal.tenant.id)
    return WebhookSecretStatus(
        configured=status.configured,
        preview=status.preview,
        created_at=status.created_at,
        previous_preview=status.previous_preview,
        previous_expires_at=status.previous_expires_at,
    )


@router.post(
    "/v1/webhook-secret/rotate",
    response_model=WebhookSecretIssued,
    responses=refusals(NotFound, Conflict),
)
async def rotate_secret(
    principal: PrincipalDep, services: ServicesDep, response: Response
) -> WebhookSecretIssued:
    """A new secret (shown once); the old one signs beside it for the overlap window."""
    event = _secret_event(services, principal, AuditAction.WEBHOOK_SECRET_ROTATED)
    issued = await services.webhooks.secrets.rotate(principal.tenant.id, event)
    return _issued(issued, response)


@router.delete("/v1/webhook-secret", status_code=204, responses=refusals(NotFound))
async def delete_secret(principal: PrincipalDep, services: ServicesDep) -> Response:
    """Delete the secret (and any overlapping one); deliveries go unsigned."""
    event = _secret_event(services, principal, AuditAction.WEBHOOK_SECRET_DELETED)
    await services.webhooks.secrets.delete(principal.tenant.id, event)
    return Response(status_code=204)


@router.get("/v1/webhook-endpoints/gone", response_model=Page[GoneEndpointPublic])
async def list_gone(principal: PrincipalDep, services: ServicesDep) -> Page[GoneEndpointPublic]:
    """URLs that answered 410 Gone, newest first, at most
    ``HOMING_MAX_GONE_ENDPOINTS_PER_TENANT`` (200 by default; older marks are dropped),
    all in one page; jobs to them fail at once until re-enabled."""
    gone = await services.webhooks.store.gone(principal.tenant.id)
    data = [GoneEndpointPublic(url=g.url, job_id=g.job_id, gone_at=g.gone_at) for g in gone]
    return Page[GoneEndpointPublic](data=data)


@router.post(
    "/v1/webhook-endpoints/enable", status_code=204, responses=refusals(NotFound, UrlRefused)
)
async def enable_endpoint(
    body: EndpointUrl, principal: PrincipalDep, services: ServicesDep
) -> Response:
    """Deliver to a gone URL again. 404 when the URL is not marked gone."""
    url = services.webhooks.normalise_url(body.url)
    event = services.audit.event(
        actor_of(principal),
        AuditAction.WEBHOOK_ENDPOINT_ENABLED,
        tenant_id=principal.tenant.id,
        target_type="webhook_endpoint",
        # Without its query and fragment, where a receiver's token may ride.
        target_id=url.split("?", 1)[0].split("#", 1)[0],
    )
    await services.webhooks.store.reenable(principal.tenant.id, url, audit=event)
    return Response(status_code=204)
