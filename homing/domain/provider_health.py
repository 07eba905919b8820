"""Provider health for the operator: a vendor's or an account's calls over a window; the
SQL is ``homing.store.provider_health``."""

from __future__ import annotations

from dataclasses import dataclass

from homing.models import AttemptOutcome

# The latency buckets' upper bounds, milliseconds.
LATENCY_BOUNDS_MS = (100, 250, 500, 1000, 2500, 5000, 10_000, 30_000)

# The provider's failures, as the provider-failing alert counts them
# (``homing.store.alert_signals``): a refused message or a throttled call is no failure.
FAILED_OUTCOMES = (
    AttemptOutcome.TRANSIENT,
    AttemptOutcome.PROVIDER_PERMANENT,
    AttemptOutcome.UNCERTAIN,
)


@dataclass(kw_only=True, frozen=True, slots=True)
class Health:
    """One vendor's (or one account's) calls in the window: how many ended in each
    outcome, and the latency bound 95 % of them stayed under (None: above the last)."""

    provider: str
    calls: int
    outcomes: dict[str, int]
    p95_ms: int | None
    tenant_id: str | None = None
    tenant_name: str | None = None
    account_id: str | None = None

    @property
    def failed(self) -> int:
        return sum(self.outcomes.get(o.value, 0) for o in FAILED_OUTCOMES)

    @property
    def throttled(self) -> int:
        return self.outcomes.get(AttemptOutcome.THROTTLED.value, 0)

    @property
    def failure_ratio(self) -> float:
        return self.failed / self.calls if self.calls else 0.0
