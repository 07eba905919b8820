"""Vonage Messages API webhooks: status updates and inbound messages, one JSON object
per POST.

A status is ``{"message_uuid", "to", "from", "timestamp", "status", "error"?,
"client_ref"?, "channel"}``; each status of a message is one event
(``<message_uuid>:<status>``). ``client_ref`` carries the job id Homing sent.
``rejected`` (Vonage or the carrier refused the route) may send a job that asked for it
on to its next provider. An inbound message (``{"message_uuid", "from", "to", "text",
"message_type", "channel"}``, no status; the application's inbound URL may point at the
same address as its status URL) is ``<message_uuid>:inbound`` and an event only when it
is an opt-out or opt-in keyword, as for every SMS vendor (``homing.inbound.keywords``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homing.addresses import InvalidPhoneNumber, phone_key
from homing.channels import Channel
from homing.inbound.events import DeliveryEvent, EventError, EventType, RawEvent
from homing.inbound.keywords import inbound_sms
from homing.inbound.parsing import iso, load_json, mapping, text, unreadable

STATUSES: Final = {
    "submitted": EventType.INFO,
    "delivered": EventType.DELIVERED,
    "read": EventType.OPENED,
    "rejected": EventType.FAILED,
    "undeliverable": EventType.FAILED,
}


def split(body: bytes, headers: Mapping[str, str]) -> list[RawEvent]:
    """The one event of the body."""
    try:
        document = load_json(body)
    except EventError as exc:
        return [unreadable(body, str(exc))]
    if not isinstance(document, dict) or text(document.get("message_uuid")) is None:
        return [unreadable(body, "the body is not a status with a message_uuid")]
    status = "inbound" if _inbound(document) else text(document.get("status")) or "unknown"
    return [RawEvent.of(f"{str(document['message_uuid'])[:64]}:{status[:30]}", document)]


def _inbound(document: dict[str, Any]) -> bool:
    """Whether the body is a message to the number rather than a status about one."""
    return document.get("status") is None and document.get("message_type") is not None


def _number(value: Any) -> str | None:
    digits = text(value)
    if digits is None:
        return None
    try:
        return phone_key("+" + digits.removeprefix("+"))
    except InvalidPhoneNumber:
        return None


def _error(document: dict[str, Any]) -> dict[str, Any]:
    error = document.get("error")
    if not isinstance(error, dict):
        return {}
    return {k: str(error[k])[:500] for k in ("type", "title", "detail") if error.get(k)}


def interpret(payload: Any) -> DeliveryEvent:
    """One Vonage status or inbound message in Homing's terms."""
    document = mapping(payload, "the event")
    if _inbound(document):
        return inbound_sms(document.get("text"), _number(document.get("from")))
    status = text(document.get("status"))
    if status not in STATUSES:
        raise EventError("the status is not one Vonage sends")
    uuid = text(document.get("message_uuid"))
    detail = {"status": status, **_error(document)}
    return DeliveryEvent(
        type=STATUSES[status],
        vendor_type=status,
        occurred_at=iso(document.get("timestamp")),
        address=_number(document.get("to")),
        job_hint=text(document.get("client_ref")),
        message_ids=(uuid,) if uuid else (),
        detail=detail,
        channel=Channel.SMS,
        reroute="rejected by the carrier" if status == "rejected" else None,
    )
