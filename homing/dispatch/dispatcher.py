"""From a claimed job to its outcome: run one pass, then apply the retry policy."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence

from homing import tracing
from homing.clock import Clock
from homing.dispatch.passes import PassResult, PassRunner, candidates
from homing.dispatch.policy import (
    CALL_LIMIT,
    Decision,
    Defer,
    GiveUp,
    Retry,
    RetryPolicy,
    decide,
)
from homing.dispatch.unaccounted import not_resent, unknown_calls
from homing.domain.queue import Completed, Failed, Outcome, Rescheduled
from homing.logs import job_context
from homing.models import (
    EXPIRED,
    Attempt,
    ClaimedJob,
    DeliveryMode,
    FailureClass,
    Job,
    ProviderAccount,
    Queue,
)
from homing.store.tenants import HELD_ERROR_CLASS

log = logging.getLogger("homing.dispatch")


class Dispatcher:
    """Turns a claimed job into its outcome: runs one pass over the providers, then asks
    the retry policy whether to complete, retry, defer or dead-letter it."""

    def __init__(
        self,
        runner: PassRunner,
        policy: RetryPolicy,
        clock: Clock,
        policies: Mapping[Queue, RetryPolicy] | None = None,
    ) -> None:
        """``policies`` overrides ``policy`` per queue (platform-email retries sooner)."""
        self._runner = runner
        self._default = policy
        self._policies = dict(policies or {})
        self._clock = clock

    async def process(self, claimed: ClaimedJob, accounts: Sequence[ProviderAccount]) -> Outcome:
        """Deliver one claimed job once (one pass) and say what happens next.

        No database connection is held here: the claim committed before, and the
        outcome is written by the caller afterwards.
        """
        job = claimed.job
        number = claimed.pass_number
        # Every line logged during this pass (here, in the pass, in an adapter) says
        # which job, tenant and pass it is about; the binding ends with the pass.
        # Its span is a child of the one that accepted the job (docs/tracing.md).
        with (
            job_context(job.id, job.tenant_id, number),
            tracing.delivery(
                job.traceparent,
                job_id=job.id,
                tenant_id=job.tenant_id,
                channel=job.channel.value,
                pass_number=number,
            ) as span,
        ):
            outcome = await self._process(claimed, accounts)
            name = type(outcome).__name__.lower()
            # Debug: one line per pass would be a line per job at full rate.
            log.debug("pass finished", extra={"outcome": name})
            span.set(tracing.OUTCOME, name)
            if not isinstance(outcome, Completed):
                span.set(tracing.ERROR_CLASS, outcome.error_class)
            if isinstance(outcome, Failed):
                span.failed()
        return outcome

    async def _process(self, claimed: ClaimedJob, accounts: Sequence[ProviderAccount]) -> Outcome:
        job = claimed.job
        usable = candidates(job, accounts)
        # Earlier claims that recorded no outcome may have reached a vendor: they go
        # into the history as unknown calls, and fence an at_most_once job.
        unknown = unknown_calls(claimed, usable, self._clock.now())
        if unknown and job.delivery is DeliveryMode.AT_MOST_ONCE and not self._replays(job, usable):
            return not_resent(claimed, unknown)
        return _after(unknown, await self._pass(claimed, usable))

    def _replays(self, job: Job, usable: Sequence[ProviderAccount]) -> bool:
        """Whether a call again is a replay: the job has one provider, which takes
        its idempotency key. With several, the lost call may have gone to any."""
        return len(usable) == 1 and self._runner.replays(job, usable[0])

    async def _pass(self, claimed: ClaimedJob, usable: Sequence[ProviderAccount]) -> Outcome:
        job = claimed.job
        number = claimed.pass_number
        policy = self._policies.get(job.queue, self._default)
        spent = _expired(claimed, self._clock.now()) or _spent(claimed, policy)
        if spent is not None:
            return spent
        result = await self._runner.run(job, number, usable)
        if result.accepted_by is not None:
            return Completed(
                job_id=job.id,
                claim_token=claimed.claim_token,
                attempts=result.attempts,
                provider=result.accepted_by.vendor,
                provider_message_id=result.result.provider_message_id if result.result else None,
                passes_made=number,
            )
        skipped = _skipped_after(job.skipped_providers, result, usable)
        if result.uncertain_give_up:
            decision: Decision = GiveUp(result.failures[-1].detail, FailureClass.UNCERTAIN.value)
        else:
            left = sum(1 for a in usable if a.id not in skipped)
            decision = decide(
                policy,
                number,
                result.failures,
                providers_left=left,
                deferred_so_far=claimed.deferred_seconds,
                calls_so_far=claimed.provider_calls + result.calls,
            )
        return self._outcome(claimed, result, decision, skipped)

    def hold(self, claimed: ClaimedJob, seconds: float) -> Rescheduled:
        """Put a claimed job back for ``seconds`` without a pass: no pass is spent."""
        job = claimed.job
        return Rescheduled(
            job_id=job.id,
            claim_token=claimed.claim_token,
            attempts=(),
            available_at=_capped(job, self._clock.now() + seconds),
            # What was recorded before (claim number - 1, unless an earlier claim
            # recorded nothing: that stays to be told by the next claim).
            passes_made=job.passes_made,
            error="held: the tenant is suspended",
            error_class=HELD_ERROR_CLASS,
            skipped_providers=job.skipped_providers,
            refund=True,
        )

    def _outcome(
        self, claimed: ClaimedJob, result: PassResult, decision: Decision, skipped: list[str]
    ) -> Outcome:
        job, number, token = claimed.job, claimed.pass_number, claimed.claim_token
        if isinstance(decision, GiveUp):
            return Failed(
                job_id=job.id,
                claim_token=token,
                attempts=result.attempts,
                passes_made=number,
                error=decision.error,
                error_class=decision.error_class,
                skipped_providers=skipped,
                suppress=result.suppress,
            )
        now = self._clock.now()
        if _past_expiry(job, now + decision.delay):
            # The next run could only start after the job expired: it ends now rather
            # than wait to be claimed for nothing (docs/reliability.md, "Expiry").
            return Failed(
                job_id=job.id,
                claim_token=token,
                attempts=result.attempts,
                passes_made=number,
                error=f"expires at {_moment(job)} before its next try: {decision.error}",
                error_class=EXPIRED,
                skipped_providers=skipped,
            )
        if isinstance(decision, Defer):
            return Rescheduled(
                job_id=job.id,
                claim_token=token,
                attempts=result.attempts,
                available_at=now + decision.delay,
                passes_made=number - 1,
                error=decision.error,
                error_class=FailureClass.THROTTLED.value,
                skipped_providers=skipped,
                refund=True,
                deferred_seconds=decision.delay,
                provider_calls=result.calls,
            )
        assert isinstance(decision, Retry)
        return Rescheduled(
            job_id=job.id,
            claim_token=token,
            attempts=result.attempts,
            available_at=now + decision.delay,
            passes_made=number,
            error=decision.error,
            error_class=decision.error_class,
            skipped_providers=skipped,
            provider_calls=result.calls,
        )


def _after(unknown: Sequence[Attempt], outcome: Outcome) -> Outcome:
    """``outcome`` with the unaccounted calls of earlier claims before its own."""
    if not unknown:
        return outcome
    return dataclasses.replace(outcome, attempts=(*unknown, *outcome.attempts))


def _past_expiry(job: Job, epoch: float) -> bool:
    return job.expires_at is not None and epoch >= job.expires_at.timestamp()


def _capped(job: Job, epoch: float) -> float:
    """``epoch``, or the job's expiry when that comes first."""
    return epoch if job.expires_at is None else min(epoch, job.expires_at.timestamp())


def _moment(job: Job) -> str:
    assert job.expires_at is not None
    return job.expires_at.isoformat().replace("+00:00", "Z")


def _expired(claimed: ClaimedJob, now: float) -> Failed | None:
    """The job's end, without a pass, once its ``expires_at`` has come: a one-time code
    an hour late is worse than none. No pass is spent on it."""
    job = claimed.job
    if not _past_expiry(job, now):
        return None
    return Failed(
        job_id=job.id,
        claim_token=claimed.claim_token,
        attempts=(),
        passes_made=claimed.pass_number - 1,
        error=f"not delivered before it expired at {_moment(job)}",
        error_class=EXPIRED,
        skipped_providers=job.skipped_providers,
    )


def _spent(claimed: ClaimedJob, policy: RetryPolicy) -> Failed | None:
    """The job's end, without a pass, when it has nothing left to spend."""
    job = claimed.job
    if claimed.pass_number > policy.max_passes:
        # The pass counter moves at claim time: a job whose workers keep
        # dying before they record anything still ends in the dead-letter queue.
        return Failed(
            job_id=job.id,
            claim_token=claimed.claim_token,
            attempts=(),
            passes_made=policy.max_passes,
            error="lease expired on every attempt (worker lost)",
            error_class="worker_lost",
            skipped_providers=job.skipped_providers,
        )
    if claimed.provider_calls >= policy.max_provider_calls:
        # Reached before this claim (the limit was lowered since): no more calls.
        return Failed(
            job_id=job.id,
            claim_token=claimed.claim_token,
            attempts=(),
            passes_made=claimed.pass_number,
            error=(
                f"gave up after {claimed.provider_calls} provider calls, the most one job may make"
            ),
            error_class=CALL_LIMIT,
            skipped_providers=job.skipped_providers,
        )
    return None


def _skipped_after(
    previous: Sequence[str], result: PassResult, usable: Sequence[ProviderAccount]
) -> list[str]:
    skipped = list(previous) + [s for s in result.skip if s not in previous]
    if result.only is not None:
        skipped += [a.id for a in usable if a.id != result.only and a.id not in skipped]
    return skipped
