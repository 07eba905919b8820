"""Accepting up to 1,000 emails in one request and one transaction, with a result each.

Each message is validated on its own: an invalid one is rejected in its result and the
others go ahead. The valid ones are accepted together (jobs, queue entries and quota
commit as one; a batch that would overflow a monthly quota is refused whole with 403).
Each new message counts toward the quota; the request counts once toward the rate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from fastapi import APIRouter
from pydantic import ValidationError

from homing.addresses import Mailbox
from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.error_responses import refusals
from homing.api.recipient_links import LinkExtras, link_extras, unsubscribe_mailbox
from homing.api.routes.addressing import addressed_items, scheduled, template_locale
from homing.api.routes.email import check_pins, email_job, with_extras
from homing.api.schemas.batch import (
    BatchItemResult,
    BatchResult,
    EmailBatchCreate,
    EmailBatchItem,
    ItemError,
)
from homing.api.templated import TemplatedBody, render_many
from homing.channels import Channel
from homing.domain.accepting import Accepted
from homing.errors import HomingError, QuotaExceeded
from homing.managers.provider_presence import refusal_of
from homing.managers.recipients import ADDRESS_FIELDS, Addressed
from homing.managers.templates import Rendered
from homing.metrics import REFUSED, refusal_reason
from homing.models import ProviderAccount
from homing.services import Services

router = APIRouter(tags=["notifications"])


def invalid_item(index: int, exc: ValidationError, channel: Channel) -> BatchItemResult:
    """Item ``index`` of a batch on ``channel`` answered as not valid (and counted)."""
    REFUSED.labels(channel.value, refusal_reason(None)).inc()
    problems = [
        {"field": ".".join(str(p) for p in err["loc"]), "problem": err["msg"]}
        for err in exc.errors()
    ]
    error = ItemError(
        code="validation_error", message="the message is not valid", details={"errors": problems}
    )
    return BatchItemResult(index=index, error=error)


def refused_item(index: int, exc: HomingError) -> BatchItemResult:
    """Item ``index`` of a batch answered with the domain error that refused it."""
    error = ItemError(code=exc.code, message=exc.message, details=exc.details)
    return BatchItemResult(index=index, error=error)


T = TypeVar("T", bound=TemplatedBody)


async def rendered_items(
    services: Services,
    tenant_id: str,
    items: list[tuple[int, T]],
    channel: Channel,
    results: dict[int, BatchItemResult],
    variables: Mapping[int, Mapping[str, str]] | None = None,
    locales: Mapping[int, str | None] | None = None,
) -> tuple[list[tuple[int, T]], list[Rendered | None]]:
    """The items that rendered (or name no template), each with its rendered content
    (None when it names none); an item that cannot render is refused in ``results``.
    ``variables``: what Homing adds to an item's data, by index; ``locales``: the
    locale of an item that names none (its recipient's), by index."""
    if not any(item.template is not None for _, item in items):
        return items, [None] * len(items)
    added = [(variables or {}).get(index, {}) for index, _ in items]
    wanted = [(locales or {}).get(index) for index, _ in items]
    bodies = [item for _, item in items]
    outcomes = await render_many(services, tenant_id, bodies, channel.value, added, wanted)
    kept: list[tuple[int, T]] = []
    renders: list[Rendered | None] = []
    for (index, item), outcome in zip(items, outcomes, strict=True):
        if isinstance(outcome, HomingError):
            REFUSED.labels(channel.value, refusal_reason(outcome)).inc()
            results[index] = refused_item(index, outcome)
            continue
        kept.append((index, item))
        renders.append(outcome)
    return kept, renders


async def deliverable_items(
    services: Services,
    tenant_id: str,
    items: list[tuple[int, T]],
    channel: Channel,
    results: dict[int, BatchItemResult],
    needs_sender: Callable[[T], bool] = lambda item: False,
) -> list[tuple[int, T]]:
    """The items a provider of the tenant could deliver; each other one is refused in
    ``results`` (``no_provider``, ``no_sender``), as a single send would be. One read
    of the tenant's providers at most, none when a cached answer allows them all."""
    if not items:
        return items
    wanted = any(needs_sender(item) for _, item in items)
    presence = await services.presence.of(tenant_id, channel, wanted)
    kept = []
    for index, item in items:
        refusal = refusal_of(presence, channel, needs_sender(item))
        if refusal is None:
            kept.append((index, item))
            continue
        REFUSED.labels(channel.value, refusal_reason(refusal)).inc()
        results[index] = refused_item(index, refusal)
    return kept


def _pinned_ok(
    items: list[tuple[int, EmailBatchItem]],
    accounts: Sequence[ProviderAccount],
    results: dict[int, BatchItemResult],
) -> list[tuple[int, EmailBatchItem]]:
    valid = []
    for index, item in items:
        try:
            check_pins(item, accounts)
        except HomingError as exc:
            REFUSED.labels(Channel.EMAIL.value, refusal_reason(exc)).inc()
            results[index] = refused_item(index, exc)
            continue
        valid.append((index, item))
    return valid


@router.post(
    "/v1/notifications/email/batch",
    status_code=202,
    response_model=BatchResult,
    response_model_exclude_none=True,
    responses=refusals(QuotaExceeded),
)
async def send_email_batch(
    body: EmailBatchCreate, principal: PrincipalDep, services: ServicesDep
) -> BatchResult:
    """Queue up to 1,000 emails; ``results`` has one entry per message, in order.

    A message may carry its own ``idempotency_key``: a repeat is answered with the
    original job (``"replayed": true``) and uses no quota.
    """
    tenant = principal.tenant
    results: dict[int, BatchItemResult] = {}
    parsed: list[tuple[int, EmailBatchItem]] = []
    addresses: dict[str, Mailbox] = {}  # read once per request (EmailCreate._valid)
    for index, raw in enumerate(body.messages):
        try:
            parsed.append((index, EmailBatchItem.model_validate(raw, context=addresses)))
        except ValidationError as exc:
            results[index] = invalid_item(index, exc, Channel.EMAIL)
    extras: dict[int, LinkExtras] = {}
    targets: dict[int, Addressed] = {}
    addressed = await addressed_items(
        services, tenant.id, parsed, ADDRESS_FIELDS[Channel.EMAIL], Channel.EMAIL, results
    )
    mailbox = await unsubscribe_mailbox(services, tenant.id, (t for _, _, t in addressed))
    for index, item, target in addressed:
        targets[index] = target
        if target.address is not None:
            item.address_to(target.address)
        try:
            extras[index] = link_extras(
                services, tenant.id, "email", item.category, item.address_key, target, mailbox
            )
        except HomingError as exc:
            REFUSED.labels(Channel.EMAIL.value, refusal_reason(exc)).inc()
            results[index] = refused_item(index, exc)
    parsed = [(index, item) for index, item in parsed if index in extras]
    parsed = await deliverable_items(services, tenant.id, parsed, Channel.EMAIL, results)
    if any(item.provider is not None for _, item in parsed):
        accounts = await services.providers.all(tenant.id, Channel.EMAIL, enabled_only=True)
        parsed = _pinned_ok(parsed, accounts, results)
    variables = {index: extra.variables for index, extra in extras.items()}
    locales = {i: template_locale(item, targets[i]) for i, item in parsed if item.template}
    parsed, renders = await rendered_items(
        services, tenant.id, parsed, Channel.EMAIL, results, variables, locales
    )
    news = []
    for (index, item), rendered in zip(parsed, renders, strict=True):
        new = with_extras(
            email_job(services.sealer, tenant.id, item, item.idempotency_key, rendered),
            extras[index],
        )
        target = targets[index]
        if item.send_at is not None or target.timezone is not None:
            new = scheduled(new, item, target)
        news.append(new)
    # The sending-domain rule (homing.managers.sending_domains) runs in the accepting transaction,
    # as for a single email: one query for the batch, a refusal for each message it fails.
    domains = services.domains
    checks = [domains.sender_rule(tenant.id, item.from_) for _, item in parsed]
    outcomes = await services.admission.accept_many(principal, news, checks)
    return batch_answer(services, len(body.messages), parsed, outcomes, results)


def batch_answer(
    services: Services,
    total: int,
    items: Sequence[tuple[int, object]],
    outcomes: Sequence[Accepted | HomingError],
    results: dict[int, BatchItemResult],
) -> BatchResult:
    """The answer of a batch of ``total`` messages: ``results`` (the ones refused before
    accepting, by index) completed with each accepted item's outcome, in order; wakes
    the workers when anything new was queued. Shared by every channel's batch route."""
    for (index, _), outcome in zip(items, outcomes, strict=True):
        if isinstance(outcome, Accepted):
            results[index] = BatchItemResult(
                index=index,
                id=outcome.job.id,
                status=outcome.job.status.value,
                replayed=outcome.replayed or None,
            )
        else:
            results[index] = refused_item(index, outcome)
    ordered = [results[i] for i in range(total)]
    accepted = sum(1 for r in ordered if r.id is not None and not r.replayed)
    if accepted:
        services.wakeup.notify()
    replayed = sum(1 for r in ordered if r.replayed)
    return BatchResult(
        accepted=accepted,
        replayed=replayed,
        rejected=len(ordered) - accepted - replayed,
        results=ordered,
    )
