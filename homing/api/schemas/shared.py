"""What every body shares: ``Strict`` for what a client sends, ``Page`` for lists, and
the field types several bodies use (``Name``, ``PriorityName``, ``TtlSeconds``, ``Moment``).

A request body refuses what it does not name (``extra="forbid"``): a misspelt field is
a 422, never silently dropped. Every list endpoint answers one ``Page``: ``data`` in the
list's order and ``next_cursor``, passed back as ``cursor`` for the next page and null
on the last (lists that come whole have one page, so it is always null there).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
)
from pydantic.config import JsonDict

from homing.clock import in_utc
from homing.managers.recipients import CATEGORY_KEY, EXTERNAL_ID
from homing.models import MAX_TTL_SECONDS, MIN_TTL_SECONDS

__all__ = [
    "CategoryKey",
    "ExternalId",
    "Moment",
    "Name",
    "Page",
    "PriorityName",
    "SendAt",
    "Strict",
    "TtlSeconds",
]

# A name a client gives (a key, a tenant): trimmed, 1 to 200 characters.
Name = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]
PriorityName = Literal["CRITICAL", "NORMAL", "LOW"]
# Whole seconds only: strict, so "60", 60.5 and true are refused (docs/reliability.md "Expiry").
TtlSeconds = Annotated[int, Field(ge=MIN_TTL_SECONDS, le=MAX_TTL_SECONDS, strict=True)]

# A recipient's external id and a category's key (docs/recipients.md): bounded, and
# nothing a path or a log line would read otherwise.
ExternalId = Annotated[str, StringConstraints(pattern=f"^{EXTERNAL_ID}$")]
CategoryKey = Annotated[str, StringConstraints(pattern=f"^{CATEGORY_KEY}$")]

T = TypeVar("T")

# A moment in a query or body (``since``, ``until``…): ISO 8601, answered in UTC.
Moment = Annotated[datetime, AfterValidator(in_utc)]

# RFC 3339 ``date-time`` with its offset (``Z`` or ±hh:mm, hours below 24), seconds
# optional with up to 6 decimals: anything else (no offset, an epoch number, a week
# date, 40 characters or more) is refused before it is parsed (docs/scheduling.md).
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)"
)
MAX_SEND_AT = 40


def _rfc3339(value: object) -> datetime:
    if not isinstance(value, str) or len(value) >= MAX_SEND_AT or not _RFC3339.fullmatch(value):
        raise ValueError("an RFC 3339 date-time with an offset, such as 2026-05-01T09:00:00+02:00")
    return in_utc(datetime.fromisoformat(value.upper().replace("Z", "+00:00")))


# When a send is due (``send_at``): RFC 3339 with an offset, in UTC once read.
SendAt = Annotated[datetime, BeforeValidator(_rfc3339)]


def examples(*bodies: JsonDict) -> JsonDict:
    """What a body's ``model_config`` gives ``json_schema_extra`` to show it in the
    OpenAPI document (``examples``), e.g. ``ConfigDict(json_schema_extra=examples({…}))``."""
    return {"examples": list(bodies)}


# The integers a stored or fingerprinted JSON value may hold: what orjson writes (a
# signed or unsigned 64-bit integer). Python reads any number of digits, so a larger
# one would pass the schema and fail at the fingerprint or the row, as a 500.
JSON_INT_MIN, JSON_INT_MAX = -(2**63), 2**64 - 1


def fits_64_bits(value: T) -> T:
    """``value`` unchanged, or ValueError when an integer in it is outside 64 bits:
    one walk without recursion, so any nesting is safe to check."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not JSON_INT_MIN <= item <= JSON_INT_MAX:
            raise ValueError("numbers must be integers within 64 bits, or decimals")
    return value


# A free JSON object of a request (a template's data): any shape, integers within 64 bits.
JsonObject = Annotated[dict[str, Any], AfterValidator(fits_64_bits)]


class Strict(BaseModel):
    """The base of every request body: unknown fields are refused. A body whose values
    must not be coerced either (``/v1/settings``) adds ``strict=True``."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class Page(BaseModel, Generic[T]):
    """One page of a list: its items and the cursor of the next page (null on the last)."""

    data: list[T]
    next_cursor: str | None = None
