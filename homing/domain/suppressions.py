"""A suppressed address, and the reasons a tenant may give for one; the SQL is
``homing.store.suppressions``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from homing.channels import Channel

# The reasons a tenant may give for a suppression of their own (``POST /v1/suppressions``).
ENTERED_REASONS = ("manual", "hard_bounce", "complaint", "unsubscribed", "opted_out")


@dataclass(kw_only=True, frozen=True, slots=True)
class Suppression:
    """An address that must not be sent to on a channel, and why."""

    tenant_id: str
    channel: Channel
    address: str
    reason: str
    source: str
    created_at: datetime
