"""A tenant's category of notifications; the SQL is ``homing.store.categories``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(kw_only=True, frozen=True, slots=True)
class Category:
    """One of a tenant's categories: its name, kind, defaults by channel, and the
    frequency cap and quiet hours it carries (stored; enforced by a later slice)."""

    tenant_id: str
    key: str
    name: str
    kind: str
    defaults: dict[str, bool]
    frequency_cap: dict[str, int] | None
    quiet_hours: dict[str, str] | None
    created_at: datetime
    updated_at: datetime
