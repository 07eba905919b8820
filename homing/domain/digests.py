"""A notification to gather into a digest, and a digest due to be sent
(docs/notifications.md, "Digests"); the SQL is ``homing.store.digests``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The status of a notification gathered into a digest: it makes no job itself.
GATHERED = "gathered"


@dataclass(kw_only=True, frozen=True, slots=True)
class Gathering:
    """A validated notification to gather: the window it joins (recipient, key) and
    the close time a window opened now would have; its data and its size; the
    request a window it opens is sent as."""

    tenant_id: str
    recipient: str
    key: str
    close_at: float
    data: dict[str, Any] | None
    data_bytes: int
    request: dict[str, Any]
    api_key_id: str | None
    strategy: str
    template: str
    category: str | None
    escalate_after_seconds: int | None
    idempotency_key: str | None
    request_hash: str


@dataclass(kw_only=True, frozen=True, slots=True)
class DueDigest:
    """An open digest whose window has closed: what its send needs."""

    id: str
    tenant_id: str
    recipient: str
    key: str
    item_count: int
    request: dict[str, Any]
    api_key_id: str | None
