"""Resend webhook bodies (Svix): one event per POST; the ``svix-id`` header is its id."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homing.inbound.events import DeliveryEvent, EventError, EventType, RawEvent
from homing.inbound.parsing import brief, iso, load_json, mapping, text, unreadable
from homing.inbound.verification import lowered

_TYPES: Final = {
    "email.delivered": EventType.DELIVERED,
    "email.opened": EventType.OPENED,
    "email.clicked": EventType.CLICKED,
    "email.complained": EventType.COMPLAINED,
    "email.delivery_delayed": EventType.DEFERRED,
    "email.suppressed": EventType.BOUNCED,
    "email.failed": EventType.FAILED,
    "email.sent": EventType.INFO,
    "email.scheduled": EventType.INFO,
}


def split(body: bytes, headers: Mapping[str, str]) -> list[RawEvent]:
    """The one event of the body, deduplicated on ``svix-id`` (stable across retries)."""
    event_id = lowered(headers).get("svix-id", "")
    try:
        document = load_json(body)
    except EventError as exc:
        return [unreadable(body, str(exc))]
    if not isinstance(document, dict):
        return [unreadable(body, "the body is not a JSON object")]
    return [RawEvent.of(event_id, document)]


def _type(kind: str, data: dict[str, Any]) -> EventType:
    if kind == "email.bounced":
        bounce = data.get("bounce")
        permanent = isinstance(bounce, dict) and bounce.get("type") == "Permanent"
        return EventType.BOUNCED if permanent else EventType.DEFERRED
    if kind in _TYPES:
        return _TYPES[kind]
    return EventType.INFO if kind.startswith("email.") else EventType.OTHER


def _hjid(tags: Any) -> str | None:
    # Events carry tags as an object; tolerate the request's list form too.
    if isinstance(tags, dict):
        return text(tags.get("hjid"))
    if isinstance(tags, list):
        for tag in tags:
            if isinstance(tag, dict) and tag.get("name") == "hjid":
                return text(tag.get("value"))
    return None


def _detail(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    detail: dict[str, Any] = {"event": kind}
    for part in ("bounce", "click"):
        if isinstance(data.get(part), dict):
            detail[part] = brief(data[part], "type", "subType", "message", "link")
    return detail


def interpret(payload: Any) -> DeliveryEvent:
    """One Resend event in Homing's terms."""
    document = mapping(payload, "the event")
    kind = text(document.get("type"))
    if kind is None:
        raise EventError("the event has no 'type' field")
    data = mapping(document.get("data") or {}, "'data'")
    recipients = data.get("to")
    recipient = recipients[0] if isinstance(recipients, list) and recipients else recipients
    email_id = text(data.get("email_id"))
    return DeliveryEvent(
        type=_type(kind, data),
        vendor_type=kind,
        occurred_at=iso(document.get("created_at")) or iso(data.get("created_at")),
        address=text(recipient),
        job_hint=_hjid(data.get("tags")),
        message_ids=(email_id,) if email_id else (),
        detail=_detail(kind, data),
    )
