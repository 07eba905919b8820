"""What an in-app send puts in a recipient's feed, and an item of it (docs/feed.md); the
SQL is ``homing.store.feed``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

Mark = Literal["seen", "read", "archived"]


@dataclass(kw_only=True, frozen=True, slots=True)
class FeedContent:
    """What one in-app send puts in the feed, validated and bounded by the caller."""

    recipient_id: str
    body: str
    title: str | None = None
    url: str | None = None
    category: str | None = None
    data: dict[str, Any] | None = None


@dataclass(kw_only=True, frozen=True, slots=True)
class FeedItem:
    """One item of a recipient's feed."""

    id: str
    seq: int
    job_id: str
    created_at: datetime
    title: str | None
    body: str
    url: str | None
    category: str | None
    data: dict[str, Any] | None
    seen_at: datetime | None
    read_at: datetime | None
    archived_at: datetime | None
