"""Claims whose outcome was never recorded, and the fence of ``at_most_once`` jobs.

A claim moves the entry's pass counter; a recorded outcome sets the job's
``passes_made`` to the claim's number (or one less, with the pass given back).
So when a claim finds the counter more than one past ``passes_made``, each claim in
between ended without a recorded outcome: its worker died, or lost its lease, maybe
after the vendor accepted the message. Both numbers come back with the claim, so
telling costs no statement.

Such a call is written into the job's history as an attempt with outcome ``unknown``,
and an ``at_most_once`` job is not sent again: it ends FAILED ``uncertain``, unless its
one provider takes an idempotency key, so that the call again is a replay
(``supports_idempotency``). docs/reliability.md, "Calls whose outcome was lost".
"""

from __future__ import annotations

from collections.abc import Sequence

from homing.clock import as_datetime
from homing.dispatch.passes import DIRECT_TARGET_ID
from homing.domain.queue import Failed
from homing.models import Attempt, AttemptOutcome, ClaimedJob, FailureClass, ProviderAccount

UNRECORDED = "the outcome of this call was never recorded (its worker stopped or lost its lease)"
UNRECORDED_OF_SEVERAL = UNRECORDED + "; it may have reached this provider or a later one"
NOT_RESENT = (
    "an earlier call may have reached the provider, and its outcome was never recorded; "
    "an at_most_once message is not sent again"
)


def unaccounted(claimed: ClaimedJob) -> range:
    """The numbers of the earlier claims of this job that recorded no outcome."""
    return range(claimed.job.passes_made + 1, claimed.pass_number)


def unknown_calls(
    claimed: ClaimedJob, usable: Sequence[ProviderAccount], epoch: float
) -> list[Attempt]:
    """One ``unknown`` attempt per claim that recorded no outcome. A pass starts at the
    first usable provider, so that is the one named (exactly, when it is the only one)."""
    numbers = unaccounted(claimed)
    if not numbers:
        return []
    job = claimed.job
    first = usable[0] if usable else None
    error = UNRECORDED if len(usable) <= 1 else UNRECORDED_OF_SEVERAL
    return [
        Attempt(
            job_id=job.id,
            tenant_id=job.tenant_id,
            number=number,
            provider_account_id=None if first is None or first.id == DIRECT_TARGET_ID else first.id,
            provider=first.vendor if first is not None else (job.provider or ""),
            outcome=AttemptOutcome.UNKNOWN,
            status_code=None,
            error=error,
            started_at=as_datetime(epoch),
            duration_ms=0,
        )
        for number in numbers
    ]


def not_resent(claimed: ClaimedJob, unknown: Sequence[Attempt]) -> Failed:
    """The end of an ``at_most_once`` job an earlier claim may have sent: FAILED
    ``uncertain``, its unaccounted calls in its history, no call made."""
    job = claimed.job
    return Failed(
        job_id=job.id,
        claim_token=claimed.claim_token,
        attempts=tuple(unknown),
        passes_made=claimed.pass_number - 1,
        error=NOT_RESENT,
        error_class=FailureClass.UNCERTAIN.value,
        skipped_providers=job.skipped_providers,
    )
