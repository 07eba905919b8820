"""Reading verified provider bodies: cut them into events, then say what each one means.

Each vendor module has two pure functions:

- ``split(body, headers) -> list[RawEvent]``: one entry per event, with the id the
  journal deduplicates on. A body that is not JSON becomes one unreadable entry.
- ``interpret(payload) -> DeliveryEvent``: the event in Homing's vocabulary, or
  ``EventError`` (the entry is quarantined and can be reprocessed later).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import orjson

from homing.errors import PayloadTooLarge
from homing.inbound.events import EventError, RawEvent, body_digest

MAX_RAW_CHARS = 65_536


def load_json(body: bytes) -> Any:
    """The decoded body, or EventError (also for JSON the journal could not store)."""
    try:
        document = json.loads(body)
    except ValueError:
        raise EventError("the body is not JSON") from None
    except RecursionError:
        raise EventError("the body is JSON nested too deeply") from None
    try:
        # Events are hashed and stored with orjson, which refuses what the stdlib reads:
        # nesting deeper than 254 levels and integers beyond 64 bits.
        orjson.dumps(document)
    except TypeError:
        raise EventError("the body is JSON too deep or with too large a number") from None
    return document


def too_many_events(count: int, limit: int) -> PayloadTooLarge:
    """The refusal of a body holding ``count`` events when at most ``limit`` are accepted."""
    return PayloadTooLarge(
        f"the body holds {count} events; at most {limit} are accepted",
        {"events": count, "max_events": limit},
    )


def unreadable(body: bytes, error: str) -> RawEvent:
    """The one entry for a verified body that cannot be cut into events."""
    digest = body_digest(body)
    text = body[:MAX_RAW_CHARS].decode("utf-8", "replace")
    return RawEvent(event_id=f"body:{digest}", raw=text, error=error, body_hash=digest)


def mapping(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise EventError(f"{what} is not an object")
    return value


def text(value: Any) -> str | None:
    """A non-empty string (numbers are accepted and stringified), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str | int | float):
        return str(value) or None
    return None


def epoch(value: Any) -> datetime | None:
    """Unix seconds (int, float or numeric string) as an aware datetime."""
    if isinstance(value, bool):
        return None
    try:
        return datetime.fromtimestamp(float(value), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def iso(value: Any) -> datetime | None:
    """An ISO 8601 time as an aware datetime (naive ones are taken as UTC)."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def brief(source: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The provider detail kept for the tenant: these keys, when present and small."""
    kept: dict[str, Any] = {}
    for key in keys:
        value = source.get(key)
        if isinstance(value, str):
            kept[key] = value[:500]
        elif isinstance(value, int | float | bool):
            kept[key] = value
    return kept
