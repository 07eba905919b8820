"""The retry policy is a pure function; pin its decisions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from homing.dispatch.policy import (
    CALL_LIMIT,
    MIN_DEFERRAL_SECONDS,
    Defer,
    GiveUp,
    PassFailure,
    Retry,
    RetryPolicy,
    backoff,
    decide,
)
from homing.models import FailureClass as F

POLICY = RetryPolicy(max_passes=3, base_seconds=5, max_seconds=3600, max_deferral_seconds=600)


def _f(cls: F, retry_after: float | None = None) -> PassFailure:
    return PassFailure("p", cls, f"{cls.value} detail", retry_after)


@given(
    pass_number=st.integers(min_value=1, max_value=40),
    base=st.floats(min_value=0.01, max_value=100),
    cap=st.floats(min_value=0.01, max_value=10_000),
    r=st.floats(min_value=0, max_value=1),
)
def test_backoff_is_jittered_within_half_to_full_of_a_capped_exponential(
    pass_number: int, base: float, cap: float, r: float
) -> None:
    ceiling = min(cap, base * 2 ** (pass_number - 1))
    delay = backoff(pass_number, base, cap, lambda: r)
    assert ceiling / 2 - 1e-9 <= delay <= ceiling + 1e-9


def test_backoff_grows_exponentially() -> None:
    delays = [backoff(n, 5, 3600, lambda: 1.0) for n in (1, 2, 3, 4)]
    assert delays == [5, 10, 20, 40]


def test_transient_failures_retry_until_the_last_attempt() -> None:
    assert isinstance(
        decide(POLICY, 1, [_f(F.TRANSIENT)], providers_left=1, deferred_so_far=0), Retry
    )
    final = decide(POLICY, 3, [_f(F.TRANSIENT)], providers_left=1, deferred_so_far=0)
    assert final == GiveUp("transient detail", "transient")


def test_message_permanent_gives_up_at_once() -> None:
    failures = [_f(F.TRANSIENT), _f(F.MESSAGE_PERMANENT)]
    decision = decide(POLICY, 1, failures, providers_left=2, deferred_so_far=0)
    assert decision == GiveUp("message_permanent detail", "message_permanent")


def test_all_throttled_defers_to_the_earliest_retry_after() -> None:
    failures = [_f(F.THROTTLED, 30), _f(F.THROTTLED, 12), _f(F.THROTTLED)]
    decision = decide(POLICY, 3, failures, providers_left=3, deferred_so_far=0)
    assert decision == Defer(12, "throttled detail")


def test_throttling_past_the_maximum_deferral_gives_up() -> None:
    decision = decide(POLICY, 1, [_f(F.THROTTLED, 60)], providers_left=1, deferred_so_far=590)
    assert isinstance(decision, GiveUp) and decision.error_class == "throttled"


def test_mixed_throttled_and_transient_spends_an_attempt() -> None:
    failures = [_f(F.THROTTLED, 5), _f(F.TRANSIENT)]
    assert isinstance(decide(POLICY, 1, failures, providers_left=2, deferred_so_far=0), Retry)


def test_no_usable_provider_left_gives_up() -> None:
    decision = decide(POLICY, 1, [_f(F.PROVIDER_PERMANENT)], providers_left=0, deferred_so_far=0)
    assert decision == GiveUp("provider_permanent detail", "provider_permanent")
    assert decide(POLICY, 1, [], providers_left=0, deferred_so_far=0) == GiveUp(
        "no enabled provider for this channel", "no_provider"
    )


@given(wait=st.one_of(st.floats(allow_nan=True), st.none()))
def test_every_deferral_waits_at_least_a_second(wait: float | None) -> None:
    decision = decide(POLICY, 1, [_f(F.THROTTLED, wait)], providers_left=1, deferred_so_far=0)
    if isinstance(decision, Defer):
        assert decision.delay >= MIN_DEFERRAL_SECONDS
    else:  # only a wait beyond the deferral limit gives up
        assert isinstance(decision, GiveUp) and wait is not None and wait > 600


def test_the_pass_that_reaches_the_call_limit_gives_up() -> None:
    capped = RetryPolicy(
        max_passes=3,
        base_seconds=5,
        max_seconds=3600,
        max_deferral_seconds=600,
        max_provider_calls=4,
    )
    throttled = [_f(F.THROTTLED, 1)]
    assert isinstance(
        decide(capped, 1, throttled, providers_left=1, deferred_so_far=0, calls_so_far=3), Defer
    )
    decision = decide(capped, 1, throttled, providers_left=1, deferred_so_far=0, calls_so_far=4)
    assert isinstance(decision, GiveUp) and decision.error_class == CALL_LIMIT
    transient = decide(
        capped, 1, [_f(F.TRANSIENT)], providers_left=1, deferred_so_far=0, calls_so_far=9
    )
    assert isinstance(transient, GiveUp) and transient.error_class == CALL_LIMIT
