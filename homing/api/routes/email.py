"""Accepting notifications: validate, then one transaction stores job + queue entry.

Admission (authentication, suspension, the rate limit) has already run in the
``SendingAdmission`` middleware; ``Admission.accept`` applies the plan and counts quota.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Annotated

import orjson
from fastapi import APIRouter, Header, Request, Response

from homing.api.deps import SEND_REFUSALS, SENDING_OPENAPI, sending
from homing.api.error_responses import refusals
from homing.api.recipient_links import LinkExtras, link_extras, unsubscribe_mailbox
from homing.api.routes.addressing import addressed, scheduled, template_locale
from homing.api.schemas.email import EmailCreate, OneChannelCreate, Queued
from homing.api.templated import render_one
from homing.channels import Channel
from homing.crypto import RequestHash, Sealer
from homing.domain.accepting import Accepted, NewJob
from homing.domain.tenants import Principal
from homing.email_headers import as_payload
from homing.errors import (
    PublicUrlRequired,
    UnknownProvider,
)
from homing.managers.recipients import ADDRESS_FIELDS, Addressed
from homing.managers.sending_domains import DomainNotVerified
from homing.managers.templates import Rendered
from homing.models import (
    QUEUE_FOR_CHANNEL,
    DeliveryMode,
    EmailPayload,
    Priority,
    ProviderAccount,
    resolve_pin,
)
from homing.services import Services

router = APIRouter(tags=["notifications"])

# What the request hash covers: the message fields, so a batch item and a single send
# with the same Idempotency-Key and message are the same request.
_EMAIL_FIELDS = set(EmailCreate.model_fields)

IdempotencyKey = Annotated[
    str | None, Header(alias="Idempotency-Key", min_length=1, max_length=255)
]


def request_hash(sealer: Sealer, canonical: bytes) -> RequestHash:
    """The Idempotency-Key fingerprint of one request (email and webhook alike): an
    HMAC under a server key, so stored hashes reveal nothing of the request."""
    return sealer.request_hash(canonical)


def requested_priority(requested: str | None) -> Priority:
    """What the request asked for, NORMAL by default. The plan may still force one
    (FREE traffic is always LOW): ``Admission.accept`` applies homing/managers/plans.toml."""
    return Priority[requested or "NORMAL"]


async def _check_pins(services: Services, tenant_id: str, body: EmailCreate) -> None:
    if body.provider is None:
        return
    accounts = await services.providers.all(tenant_id, Channel.EMAIL, enabled_only=True)
    check_pins(body, accounts)


def check_pins(body: EmailCreate, accounts: Sequence[ProviderAccount]) -> None:
    """UnknownProvider when a pinned provider is not one of ``accounts``."""
    for pin in (body.provider, body.fallback):
        if pin is not None and resolve_pin(pin, accounts) is None:
            raise UnknownProvider(f"no enabled email provider matches {pin!r}", {"provider": pin})


# Fields added after the first fingerprints were stored: left out while unset.
_LATER_FIELDS = ("ttl_seconds", "recipient", "category", "template", "data", "locale", "send_at")


def hashed_fields(body: OneChannelCreate, names: set[str]) -> set[str]:
    """The fields of ``body`` its request fingerprint covers: a field added later
    (``ttl_seconds``, ``recipient``, ``category``, ``template``, ``send_at``…) is left out while
    unset, so the hashes stored before it still match their repeats; a send by
    recipient is that request whatever address the recipient has now, so its ``to`` is
    left out; a templated send's fingerprint is its request (template, data, locale),
    not what it rendered to."""
    unset = {name for name in _LATER_FIELDS if getattr(body, name, None) is None}
    if getattr(body, "recipient", None) is not None:
        unset.add("to")
    return names - unset


def email_job(
    sealer: Sealer,
    tenant_id: str,
    body: EmailCreate,
    idempotency_key: str | None,
    rendered: Rendered | None = None,
) -> NewJob:
    """The job for one validated email (its content ``rendered`` from its template,
    when it names one); the plan may still change its priority."""
    fields = body.model_dump(by_alias=True, include=hashed_fields(body, _EMAIL_FIELDS))
    fingerprint = request_hash(sealer, orjson.dumps(fields, option=orjson.OPT_SORT_KEYS))
    assert body.to is not None  # addressed first: a send by recipient has its address
    payload: EmailPayload
    if rendered is None:
        assert body.subject is not None  # EmailCreate gives a subject or a template
        payload = {
            "to": body.to,
            "from": body.from_,
            "subject": body.subject,
            "text": body.text,
            "html": body.html,
        }
    else:
        part = rendered.part
        payload = {
            "to": body.to,
            "from": body.from_,
            "subject": part["subject"],
            "text": part["text"],
            "html": part["html"],
            "template": rendered.template,
        }
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=QUEUE_FOR_CHANNEL[Channel.EMAIL],
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
        address_key=body.address_key,
    )


def queued(services: Services, accepted: Accepted) -> Response:
    """202 with the job's id and status (``Queued``); a new job wakes the workers, a
    replay says so in ``Idempotent-Replayed``. Built here rather than by FastAPI from a
    ``Queued``: validating and serialising the model again is a share of an accept."""
    content = orjson.dumps({"id": accepted.job.id, "status": accepted.job.status.value})
    headers = {"Idempotent-Replayed": "true"} if accepted.replayed else None
    if not accepted.replayed:
        services.wakeup.notify()
    return Response(content, 202, headers, media_type="application/json")


@router.post(
    "/v1/notifications/email",
    status_code=202,
    response_model=Queued,
    openapi_extra=SENDING_OPENAPI,
    responses=refusals(*SEND_REFUSALS, PublicUrlRequired, DomainNotVerified),
)
async def send_email(
    body: EmailCreate, request: Request, idempotency_key: IdempotencyKey = None
) -> Response:
    """Queue one email. Answered 202 once the job and its queue entry are committed.

    ``recipient`` in place of ``to`` sends to that recipient's email; with a
    ``category`` its preferences apply (docs/recipients.md)."""
    principal, services = sending(request)
    tenant_id = principal.tenant.id
    target = await addressed(services, tenant_id, body, ADDRESS_FIELDS[Channel.EMAIL])
    if target.address is not None:
        body.address_to(target.address)
    mailbox = await unsubscribe_mailbox(services, tenant_id, [target])
    extras = link_extras(
        services, tenant_id, "email", body.category, body.address_key, target, mailbox
    )
    return await accept_email(services, principal, body, idempotency_key, extras, target)


async def accept_email(
    services: Services,
    principal: Principal,
    body: EmailCreate,
    idempotency_key: str | None,
    extras: LinkExtras | None = None,
    target: Addressed | None = None,
) -> Response:
    """What ``send_email`` does once the request is validated and addressed
    (``homing.api.middleware.direct_email`` calls it too, for requests it serves without
    FastAPI: those name no recipient and no category, so carry no ``extras`` and no
    ``target``)."""
    tenant = principal.tenant
    await services.presence.check(tenant.id, Channel.EMAIL)
    await _check_pins(services, tenant.id, body)
    # 422 domain_not_verified when the tenant has sending domains and this is not one.
    sender_rule = services.domains.sender_rule(tenant.id, body.from_)
    rendered = None
    if body.template is not None:
        variables = extras.variables if extras is not None else None
        locale = template_locale(body, target)
        rendered = await render_one(services, tenant.id, body, "email", variables, locale)
    job = email_job(services.sealer, tenant.id, body, idempotency_key, rendered)
    if extras is not None:
        job = with_extras(job, extras)
    if body.send_at is not None or target is not None:
        job = scheduled(job, body, target)
    return queued(services, await services.admission.accept(principal, job, sender_rule))


def with_extras(job: NewJob, extras: LinkExtras) -> NewJob:
    """The job with the header fields and the preference check its links bring."""
    if extras.headers:
        job = replace(job, payload={**job.payload, "headers": as_payload(extras.headers)})
    if extras.preference is not None:
        job = replace(job, preference=extras.preference)
    return job
