"""The provider health page's arithmetic: the p95 latency bound read from cumulative
bucket counts, and the failure ratio counted as the provider-failing alert counts it."""

from __future__ import annotations

from homing.domain.provider_health import LATENCY_BOUNDS_MS, Health
from homing.store.provider_health import p95_bound


def test_the_p95_bound_is_the_first_bucket_holding_95_percent_of_the_calls() -> None:
    # 100 calls: 90 under 100 ms, 95 under 250 ms, every one under 500 ms.
    assert p95_bound([90, 95, 100, 100, 100, 100, 100, 100], 100) == 250
    assert p95_bound([100] * len(LATENCY_BOUNDS_MS), 100) == 100
    assert p95_bound([0, 0, 0, 0, 0, 0, 0, 94], 100) is None


def test_a_refused_message_or_a_throttled_call_is_no_provider_failure() -> None:
    outcomes = {
        "success": 4,
        "transient": 2,
        "provider_permanent": 1,
        "uncertain": 1,
        "message_permanent": 5,
        "throttled": 7,
    }
    health = Health(provider="resend", calls=20, outcomes=outcomes, p95_ms=250)
    assert (health.failed, health.throttled) == (4, 7)
    assert health.failure_ratio == 0.2
    assert Health(provider="resend", calls=0, outcomes={}, p95_ms=None).failure_ratio == 0.0
