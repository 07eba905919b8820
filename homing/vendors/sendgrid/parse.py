"""SendGrid Event Webhook bodies: a JSON array of events, custom args flattened in each."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homing.inbound.events import DeliveryEvent, EventError, EventType, RawEvent, payload_hash
from homing.inbound.parsing import (
    brief,
    epoch,
    load_json,
    mapping,
    text,
    too_many_events,
    unreadable,
)

_TYPES: Final = {
    "delivered": EventType.DELIVERED,
    "open": EventType.OPENED,
    "click": EventType.CLICKED,
    "deferred": EventType.DEFERRED,
    "spamreport": EventType.COMPLAINED,
    "unsubscribe": EventType.UNSUBSCRIBED,
    "group_unsubscribe": EventType.UNSUBSCRIBED,
    "processed": EventType.INFO,
}
# `dropped` because the address bounced before or is invalid is a hard bounce (§6).
_HARD_DROP_REASONS: Final = ("bounced address", "invalid")
_SUFFIXES: Final = (".filter", ".recvd-")


def split(body: bytes, headers: Mapping[str, str], max_events: int | None = None) -> list[RawEvent]:
    """One entry per array element, deduplicated on ``sg_event_id``.

    An array of more than ``max_events`` is PayloadTooLarge, found before any element
    is hashed: a small body can hold hundreds of thousands of tiny elements.
    """
    try:
        document = load_json(body)
    except EventError as exc:
        return [unreadable(body, str(exc))]
    if not isinstance(document, list):
        return [unreadable(body, "the body is not a JSON array")]
    if max_events is not None and len(document) > max_events:
        raise too_many_events(len(document), max_events)
    entries = []
    for item in document:
        event_id = text(item.get("sg_event_id")) if isinstance(item, dict) else None
        entries.append(RawEvent.of(event_id or f"hash:{payload_hash(item)}", item))
    return entries


def sent_ids(sg_message_id: str) -> tuple[str, ...]:
    """The ``X-Message-Id`` that an event's ``sg_message_id`` may have been sent under.

    ``sg_message_id`` is the send's ``X-Message-Id`` with a server suffix: ``.filter…``
    or ``.recvd-…``. Today's ids hold no dot, but legacy ones do: SendGrid's own
    example is ``14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0``, sent as
    ``14c5d75ce93.dfd.64b469`` (twilio.com/docs/sendgrid/for-developers/tracking-events/event).
    So the id before the first suffix is the match, and the part before the first dot
    a fallback for a suffix not named here.
    """
    head = sg_message_id
    for marker in _SUFFIXES:
        head = head.split(marker, 1)[0]
    return tuple(dict.fromkeys((head, sg_message_id.split(".", 1)[0])))


def _type(event: str, item: dict[str, Any]) -> EventType:
    if event == "bounce":
        return EventType.DEFERRED if item.get("type") == "blocked" else EventType.BOUNCED
    if event == "dropped":
        reason = str(item.get("reason") or "").lower()
        hard = any(phrase in reason for phrase in _HARD_DROP_REASONS)
        return EventType.BOUNCED if hard else EventType.INFO
    return _TYPES.get(event, EventType.INFO)


def interpret(payload: Any) -> DeliveryEvent:
    """One SendGrid event in Homing's terms."""
    item = mapping(payload, "the event")
    event = text(item.get("event"))
    if event is None:
        raise EventError("the event has no 'event' field")
    message_id = text(item.get("sg_message_id"))
    return DeliveryEvent(
        type=_type(event, item),
        vendor_type=event,
        occurred_at=epoch(item.get("timestamp")),
        address=text(item.get("email")),
        job_hint=text(item.get("hjid")),
        message_ids=sent_ids(message_id) if message_id else (),
        detail=brief(item, "event", "reason", "status", "type", "response", "attempt", "url"),
    )
