"""Sends by recipient: the address a ``recipient`` has on the send's channel, and the
preference its ``category`` brings (``homing.managers.recipients.Recipients.address``),
for one send or a batch's items. A send that names neither costs nothing here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from homing.api.schemas.batch import BatchItemResult, ItemError
from homing.api.schemas.email import OneChannelCreate, PersonalCreate
from homing.channels import Channel
from homing.domain.accepting import Hold, NewJob
from homing.errors import HomingError
from homing.managers.recipients import Addressed, Ask
from homing.metrics import REFUSED, refusal_reason
from homing.services import Services

Item = TypeVar("Item", bound=PersonalCreate)

_NOBODY = Addressed()


def _named(body: PersonalCreate) -> bool:
    return body.recipient is not None or body.category is not None


def scheduled(job: NewJob, body: OneChannelCreate, target: Addressed | None = None) -> NewJob:
    """The job with the send's ``send_at`` and, for a recipient with a time zone, what
    quiet hours read (``Admission`` decides when it is due: docs/scheduling.md)."""
    send_at = body.send_at
    hold = None
    if target is not None and target.timezone is not None:
        hold = Hold(target.timezone, target.quiet_hours)
    if send_at is None and hold is None:
        return job
    return replace(job, send_at=None if send_at is None else send_at.timestamp(), hold=hold)


def template_locale(body: object, target: Addressed | None) -> str | None:
    """The locale a templated send renders in: the send's own ``locale``, else its
    recipient's (the template's fallback chain then applies, docs/templates.md)."""
    own = getattr(body, "locale", None)
    if own is not None or target is None:
        return own
    return target.locale


async def addressed(
    services: Services, tenant_id: str, body: PersonalCreate, field: str
) -> Addressed:
    """What one send goes to; the refusal (UnknownRecipient, RecipientUnreachable,
    UnknownCategory) raised. ``field``: the recipient's field for the channel."""
    if not _named(body):
        return _NOBODY
    [outcome] = await services.recipients.address(
        tenant_id, [Ask(body.recipient, body.category, field)]
    )
    if isinstance(outcome, HomingError):
        raise outcome
    return outcome


async def addressed_items(
    services: Services,
    tenant_id: str,
    items: Sequence[tuple[int, Item]],
    field: str,
    channel: Channel,
    results: dict[int, BatchItemResult],
) -> list[tuple[int, Item, Addressed]]:
    """What each of a batch's items goes to (two queries for them all); an item that
    cannot go is answered in ``results`` and left out."""
    named = [(index, item) for index, item in items if _named(item)]
    asks = [Ask(item.recipient, item.category, field) for _, item in named]
    outcomes = dict(
        zip(
            (index for index, _ in named),
            await services.recipients.address(tenant_id, asks) if asks else [],
            strict=True,
        )
    )
    kept = []
    for index, item in items:
        outcome = outcomes.get(index, _NOBODY)
        if isinstance(outcome, HomingError):
            REFUSED.labels(channel.value, refusal_reason(outcome)).inc()
            error = ItemError(code=outcome.code, message=outcome.message, details=outcome.details)
            results[index] = BatchItemResult(index=index, error=error)
        else:
            kept.append((index, item, outcome))
    return kept
