"""What the worker passes on about recorded outcomes: findings a tenant must hear of.

The worker records a batch of outcomes, then hands the findings here computed from
it (pure functions of the attempts) to an ``OutcomeWatcher`` the composition root
injects (``homing.managers.delivery_notices``): provider accounts whose credentials a
provider refused, and webhook URLs that answered 410 Gone. The watcher runs beside
the worker loop, never inside a delivery, and a failure of it is only logged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from homing.domain.queue import Outcome
from homing.models import AttemptOutcome

__all__ = ["Findings", "OutcomeWatcher", "findings"]

# A provider's "these credentials are not accepted": HTTP 401 and 403 classed
# provider_permanent by the adapter's table (docs/architecture.md, "Failure classes").
AUTH_STATUSES: Final = frozenset({401, 403})
GONE_STATUS: Final = 410
WEBHOOK_PROVIDER: Final = "webhook"


@dataclass(frozen=True, slots=True)
class Findings:
    """(tenant id, account id) of refused credentials; (tenant id, job id) of 410s."""

    rejected_credentials: frozenset[tuple[str, str]]
    gone_endpoints: frozenset[tuple[str, str]]

    def __bool__(self) -> bool:
        return bool(self.rejected_credentials or self.gone_endpoints)


def findings(outcomes: Sequence[Outcome]) -> Findings:
    """What in ``outcomes`` a tenant must be told about."""
    rejected: set[tuple[str, str]] = set()
    gone: set[tuple[str, str]] = set()
    for outcome in outcomes:
        for attempt in outcome.attempts:
            if attempt.provider == WEBHOOK_PROVIDER:
                if attempt.status_code == GONE_STATUS:
                    gone.add((attempt.tenant_id, attempt.job_id))
                continue
            if (
                attempt.outcome is AttemptOutcome.PROVIDER_PERMANENT
                and attempt.status_code in AUTH_STATUSES
                and attempt.provider_account_id is not None
            ):
                rejected.add((attempt.tenant_id, attempt.provider_account_id))
    return Findings(frozenset(rejected), frozenset(gone))


class OutcomeWatcher(Protocol):
    """Told of every batch's findings (only when there are some), as plain values so
    the managers that implement it need not import this layer."""

    async def watch(
        self,
        rejected_credentials: frozenset[tuple[str, str]],
        gone_endpoints: frozenset[tuple[str, str]],
    ) -> None: ...
