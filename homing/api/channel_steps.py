"""The steps of a multi-channel notification (docs/notifications.md): for each channel
it names, the job its single send would make, built by that send's own code (the
channel's body, its addressing by recipient, its links, its template rendering and its
job builder), or why the step is skipped.

A step is skipped, and says so, when the tenant has no enabled provider for its channel
(``no_provider``; an SMS step, which names no sender, also when no SMS provider has one:
``no_sender``), the recipient has no address on the channel (``unreachable``), the
template has no part for it (``no_template_part``) or the stored chat id does not suit
the vendor (``invalid_address``). The provider check is the single sends' one
(``ProviderPresence``): without it an email or SMS step would be queued and
dead-lettered, and a chat step would refuse the whole request. Preferences, caps and
suppressions are the accepting transaction's, as for single sends: a step they turn
down ends ``skipped`` with the job's error class. What is wrong with the request itself
(an unknown recipient or category, a template that does not render) refuses the whole
request.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from homing.api.recipient_links import link_extras, unsubscribe_mailbox
from homing.api.routes.addressing import addressed
from homing.api.routes.chat import chat_account, chat_job
from homing.api.routes.email import email_job, requested_priority, with_extras
from homing.api.routes.sms import sms_job
from homing.api.schemas.chat import ChatCreate, check_chat_id
from homing.api.schemas.email import EmailCreate
from homing.api.schemas.multichannel import NotificationsCreate
from homing.api.schemas.sms import SmsCreate
from homing.api.templated import render_one
from homing.channels import Channel
from homing.domain.accepting import NewJob
from homing.domain.feed import FeedContent
from homing.domain.preferences import PreferenceCheck
from homing.domain.recipients import Recipient
from homing.errors import (
    HomingError,
    InvalidRequest,
    NoProvider,
    NoSender,
    NotFound,
    RecipientUnreachable,
    UnknownCategory,
    UnknownProvider,
    UnknownRecipient,
)
from homing.managers.recipients import ADDRESS_FIELDS
from homing.models import QUEUE_FOR_CHANNEL
from homing.rendering import TemplateError
from homing.services import Services
from homing.store.notification_rows import StepPlan
from homing.vendors import VENDORS

__all__ = ["checked_recipient", "step_plans"]


class _Skip(Exception):
    """This channel's step cannot go: its reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def checked_recipient(
    services: Services, tenant_id: str, body: NotificationsCreate
) -> Recipient:
    """The recipient ``body`` names; UnknownRecipient or UnknownCategory for the whole
    request."""
    try:
        recipient = await services.recipients.get(tenant_id, body.recipient)
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
    return recipient


async def step_plans(
    services: Services, tenant_id: str, body: NotificationsCreate
) -> tuple[StepPlan, ...]:
    """One plan per channel of ``body``, in order; UnknownRecipient or UnknownCategory
    for the whole request."""
    await checked_recipient(services, tenant_id, body)
    plans = []
    for name in body.channels:
        channel = Channel(name)
        try:
            await _provided(services, tenant_id, channel)
            plans.append(await _BUILDERS[name](services, tenant_id, body))
        except _Skip as skip:
            plans.append(StepPlan(tenant_id=tenant_id, channel=channel, reason=skip.reason))
    return tuple(plans)


async def _provided(services: Services, tenant_id: str, channel: Channel) -> None:
    """Skip the step when the tenant cannot deliver on ``channel`` by construction (a
    step's SMS names no sender, so it needs a provider that has one)."""
    try:
        await services.presence.check(tenant_id, channel, needs_sender=channel is Channel.SMS)
    except (NoProvider, NoSender) as refusal:
        raise _Skip(refusal.code) from None


def _shared(body: NotificationsCreate) -> dict[str, Any]:
    fields = {
        "recipient": body.recipient,
        "category": body.category,
        "template": body.template,
        "data": body.data,
        "locale": body.locale,
        "priority": body.priority,
    }
    return {k: v for k, v in fields.items() if v is not None}


def _body(model: type[Any], fields: dict[str, Any]) -> Any:
    """The channel's own send body, validated as its route validates it."""
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise InvalidRequest(f"{field}: {error['msg']}", {"field": field}) from None


async def _addressed(services: Services, tenant_id: str, body: Any, field: str) -> Any:
    try:
        return await addressed(services, tenant_id, body, field)
    except RecipientUnreachable:
        raise _Skip("unreachable") from None


async def _rendered(
    services: Services, tenant_id: str, body: Any, channel: str, added: dict[str, str]
) -> Any:
    try:
        return await render_one(services, tenant_id, body, channel, added)
    except TemplateError as exc:
        if "channels" in exc.details:  # the template has no part for this channel
            raise _Skip("no_template_part") from None
        raise


async def _email(services: Services, tenant_id: str, body: NotificationsCreate) -> StepPlan:
    email: EmailCreate = _body(EmailCreate, {**_shared(body), "from": body.from_})
    target = await _addressed(services, tenant_id, email, ADDRESS_FIELDS[Channel.EMAIL])
    email.address_to(target.address)
    mailbox = await unsubscribe_mailbox(services, tenant_id, [target])
    extras = link_extras(
        services, tenant_id, "email", email.category, email.address_key, target, mailbox
    )
    rendered = await _rendered(services, tenant_id, email, "email", extras.variables)
    job = with_extras(email_job(services.sealer, tenant_id, email, None, rendered), extras)
    check = services.domains.sender_rule(tenant_id, email.from_)
    return StepPlan(tenant_id=tenant_id, channel=Channel.EMAIL, new=job, check=check)


async def _sms(services: Services, tenant_id: str, body: NotificationsCreate) -> StepPlan:
    sms: SmsCreate = _body(SmsCreate, _shared(body))
    target = await _addressed(services, tenant_id, sms, ADDRESS_FIELDS[Channel.SMS])
    sms.to = target.address
    added = link_extras(services, tenant_id, "sms", sms.category, None, target).variables
    rendered = await _rendered(services, tenant_id, sms, "sms", added)
    job = sms_job(services.sealer, tenant_id, sms, None, target.preference, rendered)
    return StepPlan(tenant_id=tenant_id, channel=Channel.SMS, new=job)


async def _chat(services: Services, tenant_id: str, body: NotificationsCreate) -> StepPlan:
    chat: ChatCreate = _body(ChatCreate, _shared(body))
    try:
        account = await chat_account(services, tenant_id, None)
    except (NoProvider, UnknownProvider):  # disabled since the step's check
        raise _Skip("no_provider") from None
    vendor = VENDORS[account.vendor].chat if account.vendor in VENDORS else None
    target = await _addressed(services, tenant_id, chat, vendor.recipient_field if vendor else "")
    chat.to = target.address
    added = link_extras(services, tenant_id, "chat", chat.category, None, target).variables
    rendered = await _rendered(services, tenant_id, chat, "chat", added)
    try:
        check_chat_id(account.vendor, chat.to or "", rendered.part["format"])
    except HomingError:
        raise _Skip("invalid_address") from None
    job = chat_job(services, tenant_id, chat, account.vendor, None, rendered)
    return StepPlan(
        tenant_id=tenant_id, channel=Channel.CHAT, new=replace(job, preference=target.preference)
    )


async def _in_app(services: Services, tenant_id: str, body: NotificationsCreate) -> StepPlan:
    reader = await services.feed.reader_of(tenant_id, body.recipient)
    rendered = await _rendered(services, tenant_id, body, "in_app", {})
    text = rendered.part
    content = services.feed.check(
        FeedContent(
            recipient_id=reader.recipient_id,
            body=text["body"],
            title=text["title"],
            url=text["url"],
            category=body.category,
            data=body.data,
        )
    )
    category = body.category
    payload = {"recipient": reader.external_id, "category": category}
    job = NewJob(
        tenant_id=tenant_id,
        channel=Channel.IN_APP,
        queue=QUEUE_FOR_CHANNEL[Channel.IN_APP],
        priority=requested_priority(body.priority),
        payload={**payload, "template": rendered.template},
        preference=None if category is None else PreferenceCheck(reader.recipient_id, category),
    )
    return StepPlan(tenant_id=tenant_id, channel=Channel.IN_APP, new=job, content=content)


_BUILDERS = {"email": _email, "sms": _sms, "chat": _chat, "in_app": _in_app}
