"""The periodic evaluation of alerts and notice checks, beside the worker loop.

Every worker process runs one (``homing.cli.runner``); a lease in the database
(``AlertSignalStore.take_turn``) lets one of them evaluate per interval, and the checks are
keyed so that even two evaluations at once send each alert and notice once.
"""

from __future__ import annotations

import asyncio
import logging

from homing.clock import Clock, as_datetime
from homing.managers.alert_checks import AlertChecks
from homing.managers.notice_checks import NoticeChecks
from homing.managers.periodic import repeat
from homing.store.alert_signals import AlertSignalStore

__all__ = ["CheckRounds"]

log = logging.getLogger("homing.watch")


class CheckRounds:
    """Runs the alert checks and the notice checks, once or every interval."""

    def __init__(
        self,
        signals: AlertSignalStore,
        alerts: AlertChecks,
        notices: NoticeChecks,
        clock: Clock,
        interval_seconds: float,
    ) -> None:
        self._signals = signals
        self._alerts = alerts
        self._notices = notices
        self._clock = clock
        self._interval = interval_seconds

    async def run(self) -> bool:
        """One evaluation, if this process has the turn; whether it had."""
        now = self._clock.now()
        # The lease ends a little before the next tick, so the holder keeps its turn.
        until = as_datetime(now + self._interval * 0.9)
        if not await self._signals.take_turn(as_datetime(now), until):
            return False
        await self._alerts.run()
        await self._notices.run()
        return True

    async def run_periodically(self, stop: asyncio.Event) -> None:
        """Evaluate every interval until ``stop`` is set; a failed run is logged and
        the next one tries again."""
        await repeat(self.run, stop, self._interval, log, "alert evaluation")
