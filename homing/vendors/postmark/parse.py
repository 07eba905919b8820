"""Postmark webhook bodies: one event per POST, keyed by ``RecordType``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homing.inbound.events import DeliveryEvent, EventError, EventType, RawEvent
from homing.inbound.parsing import brief, iso, load_json, mapping, text, unreadable

HARD_BOUNCES: Final = frozenset({"HardBounce", "BadEmailAddress", "ManuallyDeactivated"})
SOFT_BOUNCES: Final = frozenset(
    {"Transient", "SoftBounce", "DnsError", "Blocked", "AutoResponder", "MailFrontier"}
)
_TIME_FIELDS: Final = {
    "Delivery": "DeliveredAt",
    "Bounce": "BouncedAt",
    "SpamComplaint": "BouncedAt",
    "Open": "ReceivedAt",
    "Click": "ReceivedAt",
    "SubscriptionChange": "ChangedAt",
}
_TYPES: Final = {
    "Delivery": EventType.DELIVERED,
    "SpamComplaint": EventType.COMPLAINED,
    "Open": EventType.OPENED,
    "Click": EventType.CLICKED,
}


def _recipient(document: dict[str, Any]) -> str | None:
    return text(document.get("Recipient")) or text(document.get("Email"))


def split(body: bytes, headers: Mapping[str, str]) -> list[RawEvent]:
    """The one event of the body. Bounces and complaints have an ``ID``; other records
    are identified by what they say (record type, message, recipient and time)."""
    try:
        document = load_json(body)
    except EventError as exc:
        return [unreadable(body, str(exc))]
    if not isinstance(document, dict):
        return [unreadable(body, "the body is not a JSON object")]
    record = text(document.get("RecordType")) or "unknown"
    if record in ("Bounce", "SpamComplaint") and text(document.get("ID")):
        return [RawEvent.of(f"{record}:{document['ID']}", document)]
    moment = text(document.get(_TIME_FIELDS.get(record, ""), "")) or ""
    parts = (record, text(document.get("MessageID")) or "", _recipient(document) or "", moment)
    return [RawEvent.of(":".join(parts), document)]


def _type(record: str, document: dict[str, Any]) -> EventType:
    if record == "Bounce":
        kind = str(document.get("Type") or "")
        hard = kind in HARD_BOUNCES or (kind not in SOFT_BOUNCES and document.get("Inactive"))
        return EventType.BOUNCED if hard else EventType.DEFERRED
    if record == "SubscriptionChange":
        suppressed = document.get("SuppressSending") is True
        return EventType.UNSUBSCRIBED if suppressed else EventType.INFO
    return _TYPES.get(record, EventType.OTHER)


def interpret(payload: Any) -> DeliveryEvent:
    """One Postmark event in Homing's terms."""
    document = mapping(payload, "the event")
    record = text(document.get("RecordType"))
    if record is None:
        raise EventError("the event has no 'RecordType' field")
    metadata = document.get("Metadata")
    message_id = text(document.get("MessageID"))
    return DeliveryEvent(
        type=_type(record, document),
        vendor_type=record,
        occurred_at=iso(document.get(_TIME_FIELDS.get(record, ""))),
        address=_recipient(document),
        job_hint=text(metadata.get("hjid")) if isinstance(metadata, dict) else None,
        message_ids=(message_id,) if message_id else (),
        detail=brief(
            document,
            "Type",
            "TypeCode",
            "Description",
            "Details",
            "OriginalLink",
            "SuppressionReason",
        ),
    )
