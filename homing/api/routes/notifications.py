"""Accepting notifications: validate, then one transaction stores job + queue entry."""

from __future__ import annotations

import hashlib
from typing import Annotated

import orjson
from fastapi import APIRouter, Header, Response

from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.schemas import EmailCreate, Queued
from homing.errors import UnknownProvider
from homing.models import (
    QUEUE_FOR_CHANNEL,
    Channel,
    DeliveryMode,
    Plan,
    Priority,
    resolve_pin,
)
from homing.services import Services
from homing.store.jobs import NewJob

router = APIRouter(tags=["notifications"])

IdempotencyKey = Annotated[
    str | None, Header(alias="Idempotency-Key", min_length=1, max_length=255)
]


def request_hash(body: dict[str, object]) -> str:
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def effective_priority(plan: Plan, requested: str | None) -> Priority:
    """FREE-plan traffic is always LOW; otherwise what was asked, NORMAL by default."""
    if plan is Plan.FREE:
        return Priority.LOW
    return Priority[requested or "NORMAL"]


async def _check_pins(services: Services, tenant_id: str, body: EmailCreate) -> None:
    if body.provider is None:
        return
    accounts = await services.providers.all(tenant_id, Channel.EMAIL, enabled_only=True)
    for pin in (body.provider, body.fallback):
        if pin is not None and resolve_pin(pin, accounts) is None:
            raise UnknownProvider(f"no enabled email provider matches {pin!r}", {"provider": pin})


@router.post("/v1/notifications/email", status_code=202, response_model=Queued)
async def send_email(
    body: EmailCreate,
    principal: PrincipalDep,
    services: ServicesDep,
    response: Response,
    idempotency_key: IdempotencyKey = None,
) -> Queued:
    """Queue one email. Answered 202 once the job and its queue entry are committed."""
    tenant = principal.tenant
    await _check_pins(services, tenant.id, body)
    payload = {
        "to": body.to,
        "from": body.from_,
        "subject": body.subject,
        "text": body.text,
        "html": body.html,
    }
    accepted = await services.jobs.accept(
        NewJob(
            tenant_id=tenant.id,
            channel=Channel.EMAIL,
            queue=QUEUE_FOR_CHANNEL[Channel.EMAIL],
            priority=effective_priority(tenant.plan, body.priority),
            payload=payload,
            delivery=DeliveryMode(body.delivery),
            provider_pin=body.provider,
            fallback_pin=body.fallback,
            idempotency_key=idempotency_key,
            request_hash=request_hash(body.model_dump(by_alias=True)),
        )
    )
    if accepted.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    else:
        services.wakeup.notify()
    return Queued(id=accepted.job.id, status=accepted.job.status.value)
