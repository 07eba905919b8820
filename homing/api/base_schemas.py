"""The two shapes every body shares: ``Strict`` for what a client sends, ``Page`` for lists.

A request body refuses what it does not name (``extra="forbid"``): a misspelt field is
a 422, never silently dropped. Every list endpoint answers one ``Page``: ``data`` in the
list's order and ``next_cursor``, passed back as ``cursor`` for the next page and null
on the last (lists that come whole have one page, so it is always null there).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Generic, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict

from homing.clock import in_utc

__all__ = ["Moment", "Page", "Strict"]

T = TypeVar("T")

# A moment in a query or body (``since``, ``until``…): ISO 8601, answered in UTC.
Moment = Annotated[datetime, AfterValidator(in_utc)]


class Strict(BaseModel):
    """The base of every request body: unknown fields are refused. A body whose values
    must not be coerced either (``/v1/settings``) adds ``strict=True``."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class Page(BaseModel, Generic[T]):
    """One page of a list: its items and the cursor of the next page (null on the last)."""

    data: list[T]
    next_cursor: str | None = None
