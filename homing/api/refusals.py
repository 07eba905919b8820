"""Refused notifications in the metrics, counted once, where the API answers them.

A refusal before the job exists (no key, past the rate, over quota, an invalid body)
is an error answer of a ``/v1/notifications/<channel>…`` route: the error handlers,
the sending gate and the direct path call ``count_refusal`` with it. Refusals of single
items inside an accepted batch, and sends that end SUPPRESSED, are counted by
``homing.managers.admission``. The channel label comes from the path, bounded to the
channels Homing has, so a tenant inventing paths cannot add series.
"""

from __future__ import annotations

from starlette.types import Scope

from homing.api.paths import routed_path
from homing.channels import Channel
from homing.errors import HomingError
from homing.metrics import REFUSED, bounded, refusal_reason

__all__ = ["count_refusal"]

NOTIFICATIONS_PREFIX = "/v1/notifications/"
CHANNELS = frozenset(c.value for c in Channel)


def channel_of(path: str) -> str | None:
    """The channel a sending path names (``"other"`` for none Homing has); None for a
    path that is not a sending path."""
    if not path.startswith(NOTIFICATIONS_PREFIX):
        return None
    return bounded(path[len(NOTIFICATIONS_PREFIX) :].split("/", 1)[0], CHANNELS)


def count_refusal(scope: Scope, error: HomingError | None) -> None:
    """Count one refused request on a sending path (None: the body did not validate)."""
    if scope.get("method") != "POST":
        return
    channel = channel_of(routed_path(scope))
    if channel is not None:
        REFUSED.labels(channel, refusal_reason(error)).inc()
