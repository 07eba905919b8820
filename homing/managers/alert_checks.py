"""Alerts on missing signals: the conditions the operator is told of, and their end.

Each evaluation computes the conditions failing now, each under a bounded key naming
no tenant (``queue_not_draining:<queue>``, ``no_worker_progress``,
``provider_failing:<provider>``, ``inbound_lag``, ``inbound_quarantine``,
``dead_letter_spike``), and compares them with those firing (``AlertSignalStore``): a new
one fires, a firing one that no longer fails resolves. The store makes each of those
happen once across processes. Thresholds are settings (docs/operations.md "Alerts").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Final

from homing.alerts import Alerter
from homing.clock import Clock, as_datetime
from homing.metrics import ALERTS
from homing.settings import AlertSettings, Settings
from homing.store.alert_signals import AlertSignalStore
from homing.store.jobs import JobStore

_DEFAULT = AlertSettings()

__all__ = ["AlertChecks", "Thresholds", "p95"]

# Inbound events a window needs before its quarantine share means anything.
MIN_INBOUND_EVENTS: Final = 20


@dataclass(kw_only=True, frozen=True, slots=True)
class Thresholds:
    """When each condition fails (HOMING_ALERT_* settings)."""

    queue_stuck_seconds: float = _DEFAULT.queue_stuck_seconds
    worker_silent_seconds: float = _DEFAULT.worker_silent_seconds
    window_seconds: float = _DEFAULT.window_seconds
    provider_failure_ratio: float = _DEFAULT.provider_failure_ratio
    provider_min_calls: int = _DEFAULT.provider_min_calls
    inbound_lag_p95_seconds: float = _DEFAULT.inbound_lag_p95_seconds
    inbound_quarantine_ratio: float = _DEFAULT.inbound_quarantine_ratio
    dead_letter_spike: int = _DEFAULT.dead_letter_spike

    @classmethod
    def of(cls, s: Settings) -> Thresholds:
        """The thresholds of ``s.alerts``, each read by its own name."""
        return cls(**{f.name: getattr(s.alerts, f.name) for f in fields(cls)})


def p95(values: Sequence[float]) -> float:
    """The 95th percentile by nearest rank (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


class AlertChecks:
    """Evaluates the conditions and fires or resolves them on the alerter."""

    def __init__(
        self,
        signals: AlertSignalStore,
        jobs: JobStore,
        alerter: Alerter,
        clock: Clock,
        thresholds: Thresholds,
    ) -> None:
        self._signals = signals
        self._jobs = jobs
        self._alerter = alerter
        self._clock = clock
        self._t = thresholds

    @property
    def thresholds(self) -> Thresholds:
        return self._t

    async def run(self) -> tuple[list[str], list[str]]:
        """One evaluation: (keys fired, keys resolved) by this call."""
        now = as_datetime(self._clock.now())
        failing = await self.failing()
        firing = await self._signals.firing()
        fired = [
            key
            for key, detail in sorted(failing.items())
            if key not in firing and await self._signals.start(key, detail, now)
        ]
        resolved = [
            key
            for key in sorted(firing)
            if key not in failing and await self._signals.stop(key, now)
        ]
        for key in fired:
            ALERTS.labels(alert=key.split(":", 1)[0], state="fired").inc()
            self._alerter.fire(key, failing[key])
        for key in resolved:
            ALERTS.labels(alert=key.split(":", 1)[0], state="resolved").inc()
            self._alerter.resolve(key, f"was: {firing[key]}")
        return fired, resolved

    async def failing(self) -> dict[str, str]:
        """Every condition failing now, by key, with what shows it."""
        failing = await self._queues()
        failing.update(await self._providers())
        failing.update(await self._inbound())
        since = as_datetime(self._clock.now() - self._t.window_seconds)
        dead = await self._signals.dead_letters_since(since)
        if dead >= self._t.dead_letter_spike:
            failing["dead_letter_spike"] = (
                f"{dead} jobs dead-lettered in {self._t.window_seconds:.0f}s "
                f"(threshold {self._t.dead_letter_spike})"
            )
        return failing

    async def _queues(self) -> dict[str, str]:
        view = await self._jobs.queues()
        oldest: dict[str, float] = {}
        for depth in view.depths:
            if depth.state == "waiting" and depth.oldest_age_seconds is not None:
                oldest[depth.queue] = max(oldest.get(depth.queue, 0.0), depth.oldest_age_seconds)
        failing = {
            f"queue_not_draining:{queue}": (
                f"the oldest claimable entry is {age:.0f}s old "
                f"(threshold {self._t.queue_stuck_seconds:.0f}s)"
            )
            for queue, age in sorted(oldest.items())
            if age > self._t.queue_stuck_seconds
        }
        if any(age > self._t.worker_silent_seconds for age in oldest.values()):
            last = await self._signals.last_finished_at()
            silent = None if last is None else self._clock.now() - last.timestamp()
            if silent is None or silent > self._t.worker_silent_seconds:
                since = "ever" if silent is None else f"{silent:.0f}s"
                failing["no_worker_progress"] = (
                    f"no job finished for {since} while entries are claimable "
                    f"(threshold {self._t.worker_silent_seconds:.0f}s)"
                )
        return failing

    async def _providers(self) -> dict[str, str]:
        since = as_datetime(self._clock.now() - self._t.window_seconds)
        failing: dict[str, str] = {}
        for calls in await self._signals.provider_calls(since):
            if calls.calls < self._t.provider_min_calls:
                continue
            ratio = calls.failed / calls.calls
            if ratio >= self._t.provider_failure_ratio:
                failing[f"provider_failing:{calls.provider}"] = (
                    f"{calls.failed} of {calls.calls} calls failed ({ratio:.0%}; "
                    f"threshold {self._t.provider_failure_ratio:.0%})"
                )
        return failing

    async def _inbound(self) -> dict[str, str]:
        since = as_datetime(self._clock.now() - self._t.window_seconds)
        window = await self._signals.inbound(since)
        failing: dict[str, str] = {}
        lag = p95(window.lags)
        if window.lags and lag > self._t.inbound_lag_p95_seconds:
            failing["inbound_lag"] = (
                f"p95 of received - occurred is {lag:.0f}s over {len(window.lags)} events "
                f"(threshold {self._t.inbound_lag_p95_seconds:.0f}s)"
            )
        if window.events >= MIN_INBOUND_EVENTS:
            share = window.quarantined / window.events
            if share >= self._t.inbound_quarantine_ratio:
                failing["inbound_quarantine"] = (
                    f"{window.quarantined} of {window.events} events quarantined ({share:.0%}; "
                    f"threshold {self._t.inbound_quarantine_ratio:.0%})"
                )
        return failing
