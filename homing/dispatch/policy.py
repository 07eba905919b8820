"""The retry policy, as pure functions: what happens to a job after one pass.

Two bounds hold whatever a provider answers: every deferral waits at least
``MIN_DEFERRAL_SECONDS`` (a ``Retry-After: 0`` or a date in the past cannot make a job
loop at the poll interval), and a job that has cost ``max_provider_calls`` calls is
given up (``CALL_LIMIT``) instead of deferred or retried again.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from homing.models import FailureClass
from homing.settings import RetrySettings

_DEFAULT = RetrySettings()

MIN_DEFERRAL_SECONDS = 1.0
CALL_LIMIT = "call_limit"


@dataclass(kw_only=True, frozen=True, slots=True)
class RetryPolicy:
    """The numbers of the retry policy: passes, backoff base and cap, the deferral
    bound and the call limit per job."""

    max_passes: int
    base_seconds: float
    max_seconds: float
    max_deferral_seconds: float
    default_throttle_seconds: float = 1.0
    max_provider_calls: int = _DEFAULT.max_provider_calls


def backoff(
    pass_number: int,
    base: float,
    cap: float,
    rand: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait after failed pass ``pass_number`` (1-based): exponential, capped,
    with equal jitter so that a burst of failures does not retry in lock-step."""
    ceiling = min(cap, base * (2.0 ** max(0, pass_number - 1)))
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
    """The policy's verdict: try again after ``delay`` seconds."""

    delay: float
    error: str
    error_class: str


@dataclass(frozen=True, slots=True)
class Defer:
    """Every provider was throttled: wait without spending a pass."""

    delay: float
    error: str


@dataclass(frozen=True, slots=True)
class GiveUp:
    """The policy's verdict: fail the job now and dead-letter it."""

    error: str
    error_class: str


Decision = Retry | Defer | GiveUp


def decide(
    policy: RetryPolicy,
    pass_number: int,
    failures: Sequence[PassFailure],
    *,
    providers_left: int,
    deferred_so_far: float,
    calls_so_far: int = 0,
    rand: Callable[[], float] = random.random,
) -> Decision:
    """Next step for a job whose pass ``pass_number`` found no provider that accepted it.

    ``providers_left`` counts the candidates that remain usable for later passes
    (those not skipped as provider_permanent); ``calls_so_far`` the provider calls the
    job has made, this pass's included.
    """
    decision = _next_step(policy, pass_number, failures, providers_left, deferred_so_far, rand)
    if not isinstance(decision, GiveUp) and calls_so_far >= policy.max_provider_calls:
        return GiveUp(
            f"gave up after {calls_so_far} provider calls, the most one job may make: "
            f"{decision.error}",
            CALL_LIMIT,
        )
    return decision


def deferral(waits: Sequence[float], default: float) -> float:
    """How long to defer for these ``Retry-After`` waits: the earliest, at least
    ``MIN_DEFERRAL_SECONDS`` (also for NaN or a negative wait)."""
    # "w >= floor" is False for NaN too, so NaN floors rather than poisoning min().
    floored = [w if w >= MIN_DEFERRAL_SECONDS else MIN_DEFERRAL_SECONDS for w in waits]
    return min(floored) if floored else max(default, MIN_DEFERRAL_SECONDS)


def _next_step(
    policy: RetryPolicy,
    pass_number: int,
    failures: Sequence[PassFailure],
    providers_left: int,
    deferred_so_far: float,
    rand: Callable[[], float],
) -> Decision:
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
        delay = deferral(waits, policy.default_throttle_seconds)
        if deferred_so_far + delay > policy.max_deferral_seconds:
            return GiveUp(f"throttled beyond the maximum deferral: {last.detail}", "throttled")
        return Defer(delay, last.detail)
    if pass_number >= policy.max_passes:
        return GiveUp(last.detail, last.failure_class.value)
    return Retry(
        backoff(pass_number, policy.base_seconds, policy.max_seconds, rand),
        last.detail,
        last.failure_class.value,
    )
