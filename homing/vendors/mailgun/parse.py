"""Mailgun webhook bodies: ``{"signature": {…}, "event-data": {…}}``, one event per POST."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homing.inbound.events import DeliveryEvent, EventError, EventType, RawEvent
from homing.inbound.parsing import brief, epoch, load_json, mapping, text, unreadable

_TYPES: Final = {
    "delivered": EventType.DELIVERED,
    "opened": EventType.OPENED,
    "clicked": EventType.CLICKED,
    "complained": EventType.COMPLAINED,
    "unsubscribed": EventType.UNSUBSCRIBED,
    "rejected": EventType.FAILED,
    "accepted": EventType.INFO,
}


def split(body: bytes, headers: Mapping[str, str]) -> list[RawEvent]:
    """The body's ``event-data``. Its ``id`` is unique only within a day, so the journal
    id is the day plus the id (the signature block is not part of the event)."""
    try:
        document = mapping(load_json(body), "the body")
        data = mapping(document.get("event-data"), "'event-data'")
    except EventError as exc:
        return [unreadable(body, str(exc))]
    moment = epoch(data.get("timestamp"))
    event_id = text(data.get("id"))
    if event_id is None or moment is None:
        signature = document.get("signature")
        token = text(signature.get("token")) if isinstance(signature, dict) else None
        return [RawEvent.of(f"token:{token}", data)]
    return [RawEvent.of(f"{moment.date().isoformat()}:{event_id}", data)]


def _type(event: str, data: dict[str, Any]) -> EventType:
    if event == "failed":
        permanent = data.get("severity") == "permanent"
        return EventType.BOUNCED if permanent else EventType.DEFERRED
    return _TYPES.get(event, EventType.INFO)


def _detail(event: str, data: dict[str, Any]) -> dict[str, Any]:
    detail = {"event": event, **brief(data, "severity", "reason", "url")}
    status = data.get("delivery-status")
    if isinstance(status, dict):
        detail["delivery_status"] = brief(status, "code", "message", "attempt-no")
    return detail


def interpret(payload: Any) -> DeliveryEvent:
    """One Mailgun event in Homing's terms."""
    data = mapping(payload, "'event-data'")
    event = text(data.get("event"))
    if event is None:
        raise EventError("the event has no 'event' field")
    message = data.get("message")
    headers = message.get("headers") if isinstance(message, dict) else None
    message_id = text(headers.get("message-id")) if isinstance(headers, dict) else None
    variables = data.get("user-variables")
    return DeliveryEvent(
        type=_type(event, data),
        vendor_type=event,
        occurred_at=epoch(data.get("timestamp")),
        address=text(data.get("recipient")),
        job_hint=text(variables.get("hjid")) if isinstance(variables, dict) else None,
        # Mailgun answers a send with "<id@domain>"; events carry it without brackets.
        message_ids=(f"<{message_id}>", message_id) if message_id else (),
        detail=_detail(event, data),
    )
