"""Accepting SMS: one message, or up to 1,000 in one request, as email is accepted.

The body is validated and its numbers made E.164 (``homing.api.schemas.sms``); the job
carries the text's encoding and segment count, which ``GET /v1/jobs/{id}`` shows. The
plan, the quota and suppression apply in the accepting transaction, as for email.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson
from fastapi import APIRouter, Request, Response
from pydantic import ValidationError

from homing.api.deps import SEND_REFUSALS, SENDING_OPENAPI, PrincipalDep, ServicesDep, sending
from homing.api.error_responses import refusals
from homing.api.recipient_links import link_extras
from homing.api.routes.addressing import (
    addressed,
    addressed_items,
    scheduled,
    template_locale,
)
from homing.api.routes.batch import (
    batch_answer,
    deliverable_items,
    invalid_item,
    refused_item,
    rendered_items,
)
from homing.api.routes.email import (
    IdempotencyKey,
    hashed_fields,
    queued,
    request_hash,
    requested_priority,
)
from homing.api.schemas.batch import BatchItemResult, BatchResult
from homing.api.schemas.email import Queued
from homing.api.schemas.sms import SmsBatchCreate, SmsBatchItem, SmsCreate
from homing.api.templated import render_one
from homing.channels import Channel
from homing.crypto import Sealer
from homing.domain.accepting import NewJob
from homing.domain.preferences import PreferenceCheck
from homing.errors import (
    HomingError,
    NoSender,
    QuotaExceeded,
    UnknownProvider,
)
from homing.managers.recipients import ADDRESS_FIELDS
from homing.managers.templates import Rendered
from homing.models import (
    QUEUE_FOR_CHANNEL,
    DeliveryMode,
    ProviderAccount,
    SmsPayload,
    SmsSegments,
    resolve_pin,
)

router = APIRouter(tags=["notifications"])

_SMS_FIELDS = set(SmsCreate.model_fields)
# The recipient's field that holds its phone number.
_FIELD = ADDRESS_FIELDS[Channel.SMS]


def check_sms_pins(body: SmsCreate, accounts: Sequence[ProviderAccount]) -> None:
    """UnknownProvider when a pinned provider is not one of the SMS ``accounts``."""
    for pin in (body.provider, body.fallback):
        if pin is not None and resolve_pin(pin, accounts) is None:
            raise UnknownProvider(f"no enabled SMS provider matches {pin!r}", {"provider": pin})


def sms_job(
    sealer: Sealer,
    tenant_id: str,
    body: SmsCreate,
    idempotency_key: str | None,
    preference: PreferenceCheck | None = None,
    rendered: Rendered | None = None,
) -> NewJob:
    """The job for one validated and addressed SMS (its body ``rendered`` from its
    template, when it names one); the plan may still change its priority.
    ``preference``: the recipient's, when it is sent by recipient in a category."""
    fields = body.model_dump(by_alias=True, include=hashed_fields(body, _SMS_FIELDS))
    fingerprint = request_hash(sealer, orjson.dumps(fields, option=orjson.OPT_SORT_KEYS))
    text = body.body if rendered is None else rendered.part["body"]
    assert text is not None  # SmsCreate gives a body or a template
    assert body.to is not None  # addressed first: a send by recipient has its address
    cost = SmsSegments.of(text)
    payload: SmsPayload = {
        "to": body.to,
        "from": body.from_,
        "body": text,
        "encoding": cost.encoding.value,
        "characters": cost.units,
        "segments": cost.segments,
        "fallback_on_undelivered": body.fallback_on_undelivered,
    }
    if rendered is not None:
        payload["template"] = rendered.template
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.SMS,
        queue=QUEUE_FOR_CHANNEL[Channel.SMS],
        priority=requested_priority(body.priority),
        payload=payload,
        delivery=DeliveryMode(body.delivery),
        provider_pin=body.provider,
        fallback_pin=body.fallback,
        ordering_key=body.ordering_key,
        ttl_seconds=body.ttl_seconds,
        idempotency_key=idempotency_key,
        request_hash=fingerprint.stored,
        request_aliases=fingerprint.accepted,
        preference=preference,
    )


@router.post(
    "/v1/notifications/sms",
    status_code=202,
    response_model=Queued,
    openapi_extra=SENDING_OPENAPI,
    responses=refusals(*SEND_REFUSALS, NoSender),
)
async def send_sms(
    body: SmsCreate, request: Request, idempotency_key: IdempotencyKey = None
) -> Response:
    """Queue one SMS. Answered 202 once the job and its queue entry are committed."""
    principal, services = sending(request)
    tenant = principal.tenant
    await services.presence.check(tenant.id, Channel.SMS, needs_sender=body.from_ is None)
    target = await addressed(services, tenant.id, body, _FIELD)
    if target.address is not None:
        body.to = target.address
    if body.provider is not None:
        accounts = await services.providers.all(tenant.id, Channel.SMS, enabled_only=True)
        check_sms_pins(body, accounts)
    rendered = None
    if body.template is not None:
        added = link_extras(services, tenant.id, "sms", body.category, None, target).variables
        locale = template_locale(body, target)
        rendered = await render_one(services, tenant.id, body, "sms", added, locale)
    job = sms_job(services.sealer, tenant.id, body, idempotency_key, target.preference, rendered)
    job = scheduled(job, body, target)
    return queued(services, await services.admission.accept(principal, job))


@router.post(
    "/v1/notifications/sms/batch",
    status_code=202,
    response_model=BatchResult,
    response_model_exclude_none=True,
    responses=refusals(QuotaExceeded),
)
async def send_sms_batch(
    body: SmsBatchCreate, principal: PrincipalDep, services: ServicesDep
) -> BatchResult:
    """Queue up to 1,000 SMS; ``results`` has one entry per message, in order."""
    tenant = principal.tenant
    results: dict[int, BatchItemResult] = {}
    valid: list[tuple[int, SmsBatchItem]] = []
    for index, raw in enumerate(body.messages):
        try:
            valid.append((index, SmsBatchItem.model_validate(raw)))
        except ValidationError as exc:
            results[index] = invalid_item(index, exc, Channel.SMS)
    targets = {}
    for index, item, target in await addressed_items(
        services, tenant.id, valid, _FIELD, Channel.SMS, results
    ):
        if target.address is not None:
            item.to = target.address
        targets[index] = target
    valid = [(index, item) for index, item in valid if index in targets]
    valid = await deliverable_items(
        services, tenant.id, valid, Channel.SMS, results, lambda item: item.from_ is None
    )
    if any(item.provider is not None for _, item in valid):
        accounts = await services.providers.all(tenant.id, Channel.SMS, enabled_only=True)
        valid = _pinned(valid, accounts, results)
    locales = {i: template_locale(item, targets[i]) for i, item in valid if item.template}
    valid, renders = await rendered_items(
        services, tenant.id, valid, Channel.SMS, results, locales=locales
    )
    news = [
        scheduled(
            sms_job(
                services.sealer,
                tenant.id,
                item,
                item.idempotency_key,
                targets[index].preference,
                rendered,
            ),
            item,
            targets[index],
        )
        for (index, item), rendered in zip(valid, renders, strict=True)
    ]
    outcomes = await services.admission.accept_many(principal, news)
    return batch_answer(services, len(body.messages), valid, outcomes, results)


def _pinned(
    items: list[tuple[int, SmsBatchItem]],
    accounts: Sequence[ProviderAccount],
    results: dict[int, BatchItemResult],
) -> list[tuple[int, SmsBatchItem]]:
    valid = []
    for index, item in items:
        try:
            check_sms_pins(item, accounts)
        except HomingError as exc:
            results[index] = refused_item(index, exc)
            continue
        valid.append((index, item))
    return valid
