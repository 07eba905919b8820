"""``POST /v1/notifications`` and ``GET /v1/notifications/{id}``: one notification to
one recipient over several channels, with a strategy (docs/notifications.md).

The steps are built by each channel's own send code (``homing.api.channel_steps``);
``Notifications.start`` stores the notification and its first jobs in one
transaction; the sweep beside the worker makes the rest.
"""

from __future__ import annotations

from typing import Annotated

import orjson
from fastapi import APIRouter, Depends, Path, Request, Response

from homing.api.channel_steps import step_plans
from homing.api.deps import SENDING_OPENAPI, PrincipalDep, ServicesDep, sending
from homing.api.digest_plans import gathering
from homing.api.error_responses import refusals
from homing.api.routes.email import IdempotencyKey, request_hash
from homing.api.schemas.multichannel import NotificationPublic, NotificationsCreate
from homing.domain.notification_rows import Notification
from homing.domain.tenants import Principal
from homing.errors import IdempotencyConflict, QuotaExceeded, UnknownCategory, UnknownRecipient
from homing.managers.sending_domains import DomainNotVerified
from homing.rendering.kernel import TemplateError
from homing.services import Services
from homing.store.notifications import NewNotification

router = APIRouter(tags=["notifications"])

NotificationId = Annotated[str, Path(min_length=1, max_length=64)]


async def _sender(request: Request) -> Principal:
    """The admitted caller, its key's scope checked before the body is: a test key is
    refused (403) whatever it sent (an in-app step is live-only)."""
    principal, _ = sending(request)
    return principal


SenderDep = Annotated[Principal, Depends(_sender)]


@router.post(
    "/v1/notifications",
    status_code=202,
    response_model=NotificationPublic,
    openapi_extra=SENDING_OPENAPI,
    responses=refusals(
        IdempotencyConflict,
        QuotaExceeded,
        UnknownRecipient,
        UnknownCategory,
        TemplateError,
        DomainNotVerified,
    ),
)
async def send_notification(
    principal: SenderDep,
    body: NotificationsCreate,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """Send one template to one recipient over several channels: ``all`` at once, the
    ``first`` a provider accepts, or ``escalate`` to the next channel when no success
    signal arrives within ``escalate_after_seconds``. Answered 202 once the
    notification and its first jobs are committed, with each step's state.

    With ``digest``, it is gathered with the recipient's others of the same key and
    sent once when the window closes, its template getting ``items`` (each one's
    ``data``, in order) and ``count``: answered 202 ``gathered``, with the digest."""
    services: Services = request.app.state.services
    tenant_id = principal.tenant.id
    fields = body.model_dump(by_alias=True, exclude_none=True)
    fingerprint = request_hash(
        services.sealer, orjson.dumps({"notification": fields}, option=orjson.OPT_SORT_KEYS)
    )
    if body.digest is not None:
        gathered = await gathering(services, principal, body, idempotency_key, fingerprint.stored)
        note, replayed = await services.digests.gather(gathered)
        return _accepted(note, replayed)
    plans = await step_plans(services, tenant_id, body)
    new = NewNotification(
        tenant_id=tenant_id,
        strategy=body.strategy,
        recipient=body.recipient,
        template=body.template,
        category=body.category,
        escalate_after_seconds=body.escalate_after_seconds,
        idempotency_key=idempotency_key,
        request_hash=fingerprint.stored,
        steps=plans,
    )
    note, replayed = await services.notifications.start(principal, new)
    return _accepted(note, replayed)


def _accepted(note: Notification, replayed: bool) -> Response:
    content = NotificationPublic.of(note).model_dump_json().encode()
    headers = {"Idempotent-Replayed": "true"} if replayed else None
    return Response(content, 202, headers, media_type="application/json")


@router.get("/v1/notifications/{notification_id}", response_model=NotificationPublic)
async def get_notification(
    notification_id: NotificationId, principal: PrincipalDep, services: ServicesDep
) -> NotificationPublic:
    """A notification and each of its steps: channel, job, status and why."""
    note = await services.notifications.get(principal.tenant.id, notification_id)
    return NotificationPublic.of(note)
