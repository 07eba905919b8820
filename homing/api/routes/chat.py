"""``POST /v1/notifications/chat``: one chat message, to a chat vendor.

The job is addressed to one vendor's chat: the pinned provider's, or the tenant's
first enabled chat provider's. Its chat id is checked against that vendor's form
before anything is stored.
"""

from __future__ import annotations

from dataclasses import replace

import orjson
from fastapi import APIRouter, Request, Response

from homing.api.deps import SEND_REFUSALS, SENDING_OPENAPI, sending
from homing.api.error_responses import refusals
from homing.api.recipient_links import link_extras
from homing.api.routes.addressing import addressed, scheduled, template_locale
from homing.api.routes.email import (
    IdempotencyKey,
    hashed_fields,
    queued,
    request_hash,
    requested_priority,
)
from homing.api.schemas.chat import ChatCreate, check_chat_id
from homing.api.schemas.email import Queued
from homing.api.templated import render_one
from homing.channels import Channel
from homing.domain.accepting import NewJob
from homing.errors import (
    UnknownProvider,
)
from homing.managers.templates import Rendered
from homing.models import QUEUE_FOR_CHANNEL, ChatPayload, ProviderAccount, resolve_pin
from homing.services import Services
from homing.vendors import VENDORS

_CHAT_FIELDS = set(ChatCreate.model_fields)

router = APIRouter(tags=["notifications"])


async def chat_account(services: Services, tenant_id: str, pin: str | None) -> ProviderAccount:
    """The account the job is for: the pinned one, or the first enabled chat account
    (NoProvider when there is none; UnknownProvider when none matches the pin)."""
    if pin is None:
        await services.presence.check(tenant_id, Channel.CHAT)
    accounts = await services.providers.all(tenant_id, Channel.CHAT, enabled_only=True)
    account = resolve_pin(pin, accounts) if pin is not None else next(iter(accounts), None)
    if account is None:
        named = f" matches {pin!r}" if pin is not None else " is registered"
        raise UnknownProvider(f"no enabled chat provider{named}", {"provider": pin})
    return account


def chat_job(
    services: Services,
    tenant_id: str,
    body: ChatCreate,
    kind: str,
    idempotency_key: str | None,
    rendered: Rendered | None = None,
) -> NewJob:
    """The job for one validated chat message (its text and format ``rendered`` from
    its template, when it names one); the plan may still change its priority."""
    fields = body.model_dump(include=hashed_fields(body, _CHAT_FIELDS))
    fingerprint = request_hash(
        services.sealer, orjson.dumps({"chat": fields}, option=orjson.OPT_SORT_KEYS)
    )
    address = VENDORS[kind].chat if kind in VENDORS else None
    folds = address is not None and address.fold_at_names
    to = body.to or ""
    to = to.lower() if to.startswith("@") and folds else to
    payload: ChatPayload
    if rendered is None:
        assert body.text is not None  # ChatCreate gives a text or a template
        payload = {"to": to, "text": body.text, "format": body.format, "kind": kind}
    else:
        part = rendered.part
        payload = {
            "to": to,
            "text": part["text"],
            "format": part["format"],
            "kind": kind,
            "template": rendered.template,
        }
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.CHAT,
        queue=QUEUE_FOR_CHANNEL[Channel.CHAT],
        priority=requested_priority(body.priority),
        payload=payload,
        provider_pin=body.provider,
        ordering_key=body.ordering_key,
        ttl_seconds=body.ttl_seconds,
        idempotency_key=idempotency_key,
        request_hash=fingerprint.stored,
        request_aliases=fingerprint.accepted,
    )


@router.post(
    "/v1/notifications/chat",
    status_code=202,
    response_model=Queued,
    openapi_extra=SENDING_OPENAPI,
    responses=refusals(*SEND_REFUSALS),
)
async def send_chat(
    body: ChatCreate, request: Request, idempotency_key: IdempotencyKey = None
) -> Response:
    """Queue one chat message. Answered 202 once the job and its queue entry are committed."""
    principal, services = sending(request)
    tenant = principal.tenant
    account = await chat_account(services, tenant.id, body.provider)
    vendor = VENDORS[account.vendor].chat if account.vendor in VENDORS else None
    # A recipient's chat id for this vendor is in the field its descriptor names.
    field = vendor.recipient_field if vendor is not None else ""
    target = await addressed(services, tenant.id, body, field)
    if target.address is not None:
        body.to = target.address
    rendered = None
    if body.template is not None:
        added = link_extras(services, tenant.id, "chat", body.category, None, target).variables
        locale = template_locale(body, target)
        rendered = await render_one(services, tenant.id, body, "chat", added, locale)
    text_format = body.format if rendered is None else rendered.part["format"]
    check_chat_id(account.vendor, body.to or "", text_format)
    job = chat_job(services, tenant.id, body, account.vendor, idempotency_key, rendered)
    if target.preference is not None:
        job = replace(job, preference=target.preference)
    job = scheduled(job, body, target)
    return queued(services, await services.admission.accept(principal, job))
