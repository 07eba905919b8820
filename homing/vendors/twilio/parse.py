"""Twilio's form posts: status callbacks about a message, and inbound messages.

A status callback carries ``MessageSid`` and ``MessageStatus`` (and ``ErrorCode`` when
it failed); each status of a message is one event. An inbound message (``Body``, no
status) is an event only when it is an opt-out or opt-in keyword: STOP and its
synonyms suppress the sender's number for the tenant's SMS, START and UNSTOP lift it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homing.addresses import InvalidPhoneNumber, phone_key
from homing.channels import Channel
from homing.inbound.events import DeliveryEvent, EventError, EventType, RawEvent
from homing.inbound.keywords import inbound_sms
from homing.inbound.parsing import brief, mapping, text, unreadable
from homing.vendors.twilio.verify import form_fields

STATUSES: Final = {
    "delivered": EventType.DELIVERED,
    "undelivered": EventType.FAILED,
    "failed": EventType.FAILED,
    "read": EventType.OPENED,
}
# Every status twilio-python's MessageInstance.Status lists
# (twilio/rest/api/v2010/account/message/__init__.py) is one Homing reads: the outbound
# ones above and here, and the inbound ones below. `partially_delivered` reached some
# of a message's recipients, not all: worth a line in the job's history, no verdict.
INFO: Final = frozenset(
    {"accepted", "scheduled", "queued", "sending", "sent", "canceled", "partially_delivered"}
)
# A message from the recipient: `receiving` while Twilio takes it in, then `received`.
INBOUND: Final = frozenset({"receiving", "received"})
# Failures of the route, not of the number: another provider may get through.
ROUTE_ERRORS: Final = {"30007": "30007 carrier filtering", "30008": "30008 unknown error"}


def split(body: bytes, headers: Mapping[str, str]) -> list[RawEvent]:
    """The one event of the form: ``<MessageSid>:<status>``, or ``<MessageSid>:inbound``."""
    fields = dict(form_fields(body))
    sid = text(fields.get("MessageSid")) or text(fields.get("SmsSid"))
    if sid is None:
        return [unreadable(body, "the form has no MessageSid")]
    status = text(fields.get("MessageStatus")) or text(fields.get("SmsStatus"))
    kind = "inbound" if status is None or status in INBOUND else status
    return [RawEvent.of(f"{sid[:64]}:{kind[:30]}", fields)]


def _number(value: Any) -> str | None:
    number = text(value)
    if number is None:
        return None
    try:
        return phone_key(number)
    except InvalidPhoneNumber:
        return None


def interpret(payload: Any) -> DeliveryEvent:
    """One Twilio post in Homing's terms."""
    fields = mapping(payload, "the event")
    status = text(fields.get("MessageStatus")) or text(fields.get("SmsStatus"))
    if status is None or status in INBOUND:
        return inbound_sms(fields.get("Body") or "", _number(fields.get("From")))
    if status not in STATUSES and status not in INFO:
        raise EventError("the callback's MessageStatus is not one Twilio sends")
    sid = text(fields.get("MessageSid")) or text(fields.get("SmsSid"))
    failed = STATUSES.get(status) is EventType.FAILED
    return DeliveryEvent(
        type=STATUSES.get(status, EventType.INFO),
        vendor_type=status,
        occurred_at=None,
        address=_number(fields.get("To")),
        message_ids=(sid,) if sid else (),
        detail=brief(fields, "ErrorCode", "ErrorMessage", "MessageStatus"),
        channel=Channel.SMS,
        reroute=ROUTE_ERRORS.get(str(fields.get("ErrorCode"))) if failed else None,
    )
