"""What an inbound provider event means to Homing, whatever vendor sent it.

``EventType`` is the one vocabulary every vendor's event names map onto. A job's
``delivery_status`` is the highest-ranked type among its events: it only moves forward,
so a late ``delivered`` never undoes ``bounced`` and the order events arrive in does not
matter.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

# The event types live in homing.models (the store reads and writes them too).
from homing.models import SUPPRESSING as SUPPRESSING
from homing.models import DeliveryEvent as DeliveryEvent
from homing.models import EntryStatus as EntryStatus
from homing.models import EventError as EventError
from homing.models import EventType as EventType
from homing.models import RawEvent as RawEvent
from homing.models import payload_hash as payload_hash

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


def delivery_status(types: Iterable[EventType]) -> EventType | None:
    """The furthest delivery state these events reach, or None when none is a state."""
    ranked = [t for t in types if t in _RANK]
    return max(ranked, key=_RANK.__getitem__, default=None)


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()
