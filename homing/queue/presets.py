"""Each vendor's published rate rules, as data: applied to an account by default.

An account that sets ``config.rate_rules`` replaces its vendor's preset (``[]`` turns
pacing off for it). Sources: Telegram's bot FAQ ("Broadcasting to users": about one
message a second per chat, 20 a minute per group, 30 a second in bulk), Slack's
incoming-webhook rate page (one message a second per webhook), Vonage's 30 API
requests a second per account, and Twilio's concurrency limit (error 20429) as an
account rate. docs/architecture.md, "Pacing"; README, "Pacing presets".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from homing.models import Priority

# (scope, limit, per_seconds), in the shape of ``homing.queue.pacing.RateRule``.
PRESETS: Final[Mapping[str, tuple[tuple[str, int, int], ...]]] = {
    "telegram": (("account", 30, 1), ("individual", 1, 1), ("group", 20, 60)),
    "slack": (("account", 1, 1),),
    "twilio": (("account", 100, 1),),
    "vonage": (("account", 30, 1),),
}

# When a rule binds, a lower priority may fill only this share of it, so the rest of
# each window is left for the higher ones: a bot answering a user (CRITICAL) finds a
# slot at once while its own broadcast (LOW) fills the others. Only whole slots are
# reserved, so a small rule (one message a second per chat) is shared alike.
PRIORITY_SHARES: Final[Mapping[Priority, float]] = {
    Priority.CRITICAL: 1.0,
    Priority.NORMAL: 0.95,
    Priority.LOW: 0.9,
}


def share_of(limit: int, priority: Priority) -> int:
    """How many of a rule's ``limit`` slots a job of ``priority`` may take: all but the
    whole slots its share leaves to higher priorities (30 → 27 for LOW, 2 → 2)."""
    reserved = int(limit * (1.0 - PRIORITY_SHARES.get(priority, 1.0)) + 1e-9)
    return max(1, limit - reserved)
