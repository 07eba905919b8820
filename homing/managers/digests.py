"""Digests (docs/notifications.md, "Digests"): notifications to one recipient with one
digest key are gathered, and sent once when their window closes, as one notification
whose template data is ``items`` (each gathered notification's ``data``, in order) and
``count``.

A window closes ``window_seconds`` after the notification that opened it, or at the
next ``at`` (a local wall-clock time) in the recipient's time zone (UTC when it has
none): a time a spring-forward gap skips resolves to the gap's end, one an autumn
night repeats to its first occurrence (``quiet_hours.next_reading``).

The sweep, beside the worker, reads the digests whose window has closed, a bounded
number per pass and per tenant; for each it reads the items, builds the notification
(the caller's ``DigestPlanner``: rendering and addressing are the API's send code) with
no transaction open, then stores it and marks the digest sent in one transaction,
conditional on the digest being open with the items it read. A crash before that
commit leaves the digest open (the next sweep sends it); after, sent. Two sweeps at
once: one wins the conditional update, the other's transaction rolls back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import time
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from homing.clock import Clock, as_datetime
from homing.domain.digests import DueDigest, Gathering
from homing.domain.notification_rows import Notification
from homing.domain.tenants import Principal
from homing.errors import HomingError, StoreError
from homing.managers.notifications import Notifications
from homing.managers.periodic import repeat
from homing.managers.quiet_hours import next_reading, zone
from homing.settings import DigestSettings
from homing.store.digests import DigestStore
from homing.store.notifications import NewNotification
from homing.store.tenants import TenantStore

_DEFAULT = DigestSettings()

__all__ = ["DigestPlanner", "Digests", "closes_at"]

log = logging.getLogger("homing.digests")

# What the sweep hands the API's send code: the tenant, the digest and its items'
# data; it answers with the notification to send (or raises the refusal).
DigestPlanner = Callable[[Principal, DueDigest, list[Any]], Awaitable[NewNotification]]

_UTC = ZoneInfo("UTC")


def closes_at(
    now: float, window_seconds: int | None, at: str | None, timezone: str | None
) -> float:
    """When a window opened at ``now`` closes: ``window_seconds`` later, or at the next
    local ``at`` ("HH:MM") in ``timezone`` (UTC for none, or one this system no longer
    knows)."""
    if window_seconds is not None:
        return now + window_seconds
    assert at is not None
    try:
        tz = zone(timezone) if timezone else _UTC
    except (ZoneInfoNotFoundError, ValueError):
        tz = _UTC
    return next_reading(as_datetime(now), time.fromisoformat(at), tz).timestamp()


class Digests:
    """Gathers notifications into digests and sends the digests whose window closed."""

    def __init__(
        self,
        store: DigestStore,
        notifications: Notifications,
        tenants: TenantStore,
        clock: Clock,
        *,
        batch: int = _DEFAULT.sweep_batch,
        per_tenant: int = _DEFAULT.sweep_per_tenant,
    ) -> None:
        self._store = store
        self._notifications = notifications
        self._tenants = tenants
        self._clock = clock
        self._batch = batch
        self._per_tenant = per_tenant

    async def gather(self, gathering: Gathering) -> tuple[Notification, bool]:
        """Store the notification gathered into its window (True: a replayed
        Idempotency-Key, the stored one returned)."""
        return await self._store.gather(gathering)

    async def sweep(self, planner: DigestPlanner) -> int:
        """One pass: send (or record the refusal of) up to ``batch`` digests whose
        window has closed, ``per_tenant`` at most of one tenant; how many it settled."""
        due = await self._store.due(self._clock.now(), self._batch, self._per_tenant)
        settled = 0
        for digest in due:
            settled += await self._close(digest, planner)
        return settled

    async def run_periodically(
        self, stop: asyncio.Event, interval_seconds: float, planner: DigestPlanner
    ) -> None:
        """A sweep every ``interval_seconds`` until ``stop`` is set."""
        await repeat(lambda: self.sweep(planner), stop, interval_seconds, log, "digest sweep")

    async def _close(self, digest: DueDigest, planner: DigestPlanner) -> int:
        """Send one digest; 1 when this call settled it, 0 when another sweep did or an
        item joined it meanwhile (the next pass sends it then)."""
        items = await self._store.items(digest.id, digest.item_count)
        tenant = await self._tenants.get(digest.tenant_id)
        try:
            if tenant is None or tenant.suspended:
                raise HomingError("the tenant is suspended")
            principal = Principal(tenant, digest.api_key_id or "", False)
            new = await planner(principal, digest, items)
            sent = await self._notifications.send_digest(
                principal, new, digest.id, digest.item_count
            )
        except StoreError:
            raise
        except HomingError as refused:
            reason = "tenant_suspended" if tenant is None or tenant.suspended else refused.code
            recorded = await self._store.fail(digest.id, digest.item_count, reason)
            log.info("digest not sent", extra={"digest_id": digest.id, "reason": reason})
            return 1 if recorded else 0
        return 0 if sent is None else 1
