"""What an inbound provider event means to Homing, whatever vendor sent it.

``EventType`` is the one vocabulary every vendor's event names map onto. A job's
``delivery_status`` is the highest-ranked type among its events: it only moves forward,
so a late ``delivered`` never undoes ``bounced`` and the order events arrive in does not
matter.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson


class EventType(enum.StrEnum):
    """The one vocabulary every provider's delivery event maps onto."""

    DELIVERED = "delivered"
    OPENED = "opened"
    CLICKED = "clicked"
    DEFERRED = "deferred"  # also a soft bounce: recorded, never suppresses
    BOUNCED = "bounced"  # a hard bounce
    COMPLAINED = "complained"
    UNSUBSCRIBED = "unsubscribed"
    FAILED = "failed"  # accepted by the provider, then not sent
    INFO = "info"  # processed, sent, accepted…: part of the history, not a status
    OTHER = "other"  # not about an email (a contact or domain changed): ignored
    PAYMENT = "payment"  # billing


class EntryStatus(enum.StrEnum):
    """Where a journal entry is: stored, then applied, ignored or quarantined."""

    RECEIVED = "received"
    APPLIED = "applied"
    IGNORED = "ignored"
    QUARANTINED = "quarantined"


_RANK = {
    EventType.DEFERRED: 1,
    EventType.DELIVERED: 2,
    EventType.OPENED: 3,
    EventType.CLICKED: 4,
    EventType.UNSUBSCRIBED: 5,
    EventType.COMPLAINED: 6,
    EventType.FAILED: 7,
    EventType.BOUNCED: 8,
}
SUPPRESSING = frozenset({EventType.BOUNCED, EventType.COMPLAINED})


def delivery_status(types: Iterable[EventType]) -> EventType | None:
    """The furthest delivery state these events reach, or None when none is a state."""
    ranked = [t for t in types if t in _RANK]
    return max(ranked, key=_RANK.__getitem__, default=None)


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One event cut out of a verified body, before it is understood.

    ``payload`` is the event's own JSON; ``raw`` keeps a body that was not JSON.
    ``error`` says why it cannot even be read (it is then quarantined as it is).
    """

    event_id: str
    payload: Any = None
    raw: str | None = None
    error: str | None = None
    body_hash: str = ""

    @classmethod
    def of(cls, event_id: str, payload: Any) -> RawEvent:
        return cls(event_id=event_id, payload=payload, body_hash=payload_hash(payload))


@dataclass(frozen=True, slots=True)
class DeliveryEvent:
    """A provider event about one email, in Homing's terms."""

    type: EventType
    vendor_type: str
    occurred_at: datetime | None
    recipient: str | None = None
    job_hint: str | None = None  # the hjid the provider carried back
    message_ids: tuple[str, ...] = ()  # the provider message id as Homing may have stored it
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def suppresses(self) -> bool:
        return self.type in SUPPRESSING


class EventError(ValueError):
    """A verified event that cannot be read or mapped; it is quarantined with this text."""


def payload_hash(payload: Any) -> str:
    """SHA-256 of the event's canonical JSON (sorted keys), the journal's body hash."""
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()
