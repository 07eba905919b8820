"""The retry policy, as pure functions: what happens to a job after one pass."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from homing.models import FailureClass


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int
    base_seconds: float
    max_seconds: float
    max_deferral_seconds: float
    default_throttle_seconds: float = 1.0


def backoff(
    attempt: int,
    base: float,
    cap: float,
    rand: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based): exponential, capped,
    with equal jitter so that a burst of failures does not retry in lock-step."""
    ceiling = min(cap, base * (2.0 ** max(0, attempt - 1)))
    return float(ceiling / 2 + rand() * ceiling / 2)


@dataclass(frozen=True, slots=True)
class PassFailure:
    """One provider's failure within a pass, as the policy sees it."""

    provider_key: str
    failure_class: FailureClass
    detail: str
    retry_after: float | None = None


@dataclass(frozen=True, slots=True)
class Retry:
    delay: float
    error: str
    error_class: str


@dataclass(frozen=True, slots=True)
class Defer:
    """Every provider was throttled: wait without spending an attempt."""

    delay: float
    error: str


@dataclass(frozen=True, slots=True)
class GiveUp:
    error: str
    error_class: str


Decision = Retry | Defer | GiveUp


def decide(
    policy: RetryPolicy,
    attempt: int,
    failures: Sequence[PassFailure],
    *,
    providers_left: int,
    deferred_so_far: float,
    rand: Callable[[], float] = random.random,
) -> Decision:
    """Next step for a job whose pass ``attempt`` found no provider that accepted it.

    ``providers_left`` counts the candidates that remain usable for later passes
    (those not skipped as provider_permanent).
    """
    if not failures:
        return GiveUp("no enabled provider for this channel", "no_provider")
    last = failures[-1]
    permanent = [f for f in failures if f.failure_class is FailureClass.MESSAGE_PERMANENT]
    if permanent:
        return GiveUp(permanent[0].detail, FailureClass.MESSAGE_PERMANENT.value)
    if providers_left == 0:
        return GiveUp(last.detail, last.failure_class.value)
    if all(f.failure_class is FailureClass.THROTTLED for f in failures):
        waits = [f.retry_after for f in failures if f.retry_after is not None]
        delay = max(0.0, min(waits)) if waits else policy.default_throttle_seconds
        if deferred_so_far + delay > policy.max_deferral_seconds:
            return GiveUp(f"throttled beyond the maximum deferral: {last.detail}", "throttled")
        return Defer(delay, last.detail)
    if attempt >= policy.max_attempts:
        return GiveUp(last.detail, last.failure_class.value)
    return Retry(
        backoff(attempt, policy.base_seconds, policy.max_seconds, rand),
        last.detail,
        last.failure_class.value,
    )
