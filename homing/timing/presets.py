"""Each vendor's published rate rules, as data: applied to an account by default.

An account that sets ``config.rate_rules`` replaces its vendor's preset (``[]`` turns
pacing off for it). Each preset is its vendor descriptor's ``pacing``, with its source
beside it (``homing/vendors/<name>/__init__.py``). docs/architecture.md, "Pacing";
docs/channels.md, "Pacing presets".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from homing.models import Priority
from homing.vendors import VENDORS

# (scope, limit, per_seconds), in the shape of ``homing.timing.pacing.RateRule``.
PRESETS: Final[Mapping[str, tuple[tuple[str, int, int], ...]]] = {
    name: v.pacing for name, v in VENDORS.items() if v.pacing
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
