"""Digests at the API (docs/notifications.md, "Digests"): what a notification with a
``digest`` is gathered as, and the notification a digest is sent as when its window
closes, built by the same send code as any notification (``channel_steps``), with
``items`` and ``count`` as its template data.

The sweep runs in the worker, which has no request: the entry point
(``homing.cli.runner``) hands it ``planner(services)``.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ValidationError

from homing.api.channel_steps import checked_recipient, step_plans
from homing.api.schemas.multichannel import NotificationsCreate
from homing.domain.digests import DueDigest, Gathering
from homing.domain.tenants import Principal
from homing.errors import InvalidRequest
from homing.managers.digests import DigestPlanner, closes_at
from homing.services import Services
from homing.store.notifications import NewNotification

__all__ = ["gathering", "planner"]

# Room left in the template's data bound for ``count`` and the list around the items.
_WRAPPING_BYTES = 1024


async def gathering(
    services: Services,
    principal: Principal,
    body: NotificationsCreate,
    idempotency_key: str | None,
    request_hash: str,
) -> Gathering:
    """What ``body`` (with a ``digest``) is gathered as: its recipient and category
    checked now, its window's close time in the recipient's time zone, its data
    bounded as a template's data is (InvalidRequest past it)."""
    digest = body.digest
    assert digest is not None
    tenant_id = principal.tenant.id
    recipient = await checked_recipient(services, tenant_id, body)
    size = len(orjson.dumps(body.data))
    bound = max(1, services.settings.templates.max_data_bytes - _WRAPPING_BYTES)
    if size > bound:
        raise InvalidRequest(
            f"data is over {bound} bytes, a digest item's bound",
            {"field": "data", "limit": bound},
        )
    close = closes_at(services.clock.now(), digest.window_seconds, digest.at, recipient.timezone)
    excluded = {"recipient", "data", "digest"}
    return Gathering(
        tenant_id=tenant_id,
        recipient=body.recipient,
        key=digest.key,
        close_at=close,
        data=body.data,
        data_bytes=size + 1,  # and its comma in the list
        request=body.model_dump(by_alias=True, exclude_none=True, exclude=excluded),
        api_key_id=principal.api_key_id,
        strategy=body.strategy,
        template=body.template,
        category=body.category,
        escalate_after_seconds=body.escalate_after_seconds,
        idempotency_key=idempotency_key,
        request_hash=request_hash,
    )


def planner(services: Services) -> DigestPlanner:
    """What the digest sweep sends a due digest as, for this process's services."""

    async def plan(principal: Principal, due: DueDigest, items: list[Any]) -> NewNotification:
        data = {"items": items, "count": len(items)}
        fields = {**due.request, "recipient": due.recipient, "data": data}
        try:
            body = NotificationsCreate.model_validate(fields)
        except ValidationError:
            raise InvalidRequest("the digest's request is no longer valid") from None
        return NewNotification(
            tenant_id=principal.tenant.id,
            strategy=body.strategy,
            recipient=body.recipient,
            template=body.template,
            category=body.category,
            escalate_after_seconds=body.escalate_after_seconds,
            idempotency_key=None,
            request_hash=due.id,
            steps=await step_plans(services, principal.tenant.id, body),
        )

    return plan
