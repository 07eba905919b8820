"""One pass over the candidate providers, stopping at the first success; each provider
call in it is one attempt."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from homing import tracing
from homing.channels import Channel
from homing.clock import Clock, as_datetime
from homing.dispatch.policy import PassFailure
from homing.dispatch.sandbox_guard import SandboxGuard, destination
from homing.dispatch.senders import Sender
from homing.errors import DecryptionError, InvalidRequest
from homing.metrics import PROVIDER_CALL_SECONDS, PROVIDER_CALLS, bounded
from homing.models import (
    Attempt,
    AttemptOutcome,
    DeliveryMode,
    FailureClass,
    Job,
    ProviderAccount,
    resolve_pin,
)
from homing.providers.base import ProviderFailure, SendResult
from homing.providers.deadline import DEFAULT_DEADLINE_SECONDS, DeadlineExceeded, within
from homing.providers.registry import CREDENTIAL_FIELDS
from homing.timing.pacing import Pacer

log = logging.getLogger("homing.dispatch")

# Channels delivered by Homing itself, with no provider account: the job names its
# one target (a webhook's URL). They get one synthetic target with this id.
DIRECT_CHANNELS = frozenset({Channel.WEBHOOK})
DIRECT_TARGET_ID = "direct"

# The provider label's values: the kinds the registry knows, and the direct channels'
# names; an account's provider is one of them, and anything else would read "other".
PROVIDER_KINDS = frozenset({*CREDENTIAL_FIELDS, *(c.value for c in Channel)})
SUCCESS = "success"


def direct_target(job: Job) -> ProviderAccount:
    """The synthetic target of a job on a direct channel, named after the channel."""
    return ProviderAccount(
        id=DIRECT_TARGET_ID,
        tenant_id=job.tenant_id,
        channel=job.channel,
        vendor=job.channel.value,
        priority=0,
        enabled=True,
        credentials_sealed="",
        credentials_preview="",
        config={},
        created_at=job.created_at,
    )


def candidates(job: Job, accounts: Sequence[ProviderAccount]) -> list[ProviderAccount]:
    """The providers this job may use, in order, minus those skipped for it.

    A pinned job uses only its pin and its one optional fallback; otherwise every
    enabled account of the channel in the tenant's priority order. A job on a
    direct channel (webhooks) has exactly one target, ``direct_target``.
    """
    if job.channel in DIRECT_CHANNELS:
        return [] if DIRECT_TARGET_ID in job.skipped_providers else [direct_target(job)]
    usable = [a for a in accounts if a.enabled and a.channel is job.channel]
    if job.channel is Channel.CHAT:
        # A chat job is addressed to one vendor's chat id (fixed at accept).
        usable = [a for a in usable if a.vendor == job.payload.get("kind")]
    if job.provider_pin is not None:
        chosen = [resolve_pin(job.provider_pin, usable), resolve_pin(job.fallback_pin, usable)]
        picked = [a for a in chosen if a is not None]
        ordered = list({a.id: a for a in picked}.values())
    else:
        ordered = usable
    return [a for a in ordered if a.id not in job.skipped_providers]


def named(provider: str, detail: str) -> str:
    """``detail`` naming its provider once: adapters name themselves in most of theirs
    ("<provider>: HTTP 503…"), and the pass names the provider of those that do not."""
    return detail if detail.startswith(f"{provider}:") else f"{provider}: {detail}"


@dataclass(kw_only=True, slots=True)
class PassResult:
    """What one pass over the candidate providers did: its attempts, failures, the
    provider that accepted, and the calls it spent."""

    attempts: list[Attempt] = field(default_factory=list)
    failures: list[PassFailure] = field(default_factory=list)
    accepted_by: ProviderAccount | None = None
    result: SendResult | None = None
    skip: list[str] = field(default_factory=list)
    only: str | None = None
    uncertain_give_up: bool = False
    calls: int = 0  # sends attempted (a paced or refused provider is not called)
    suppress: str | None = None  # the provider refused the recipient for good


def count_call(
    job: Job, account: ProviderAccount, failure: ProviderFailure | None, seconds: float
) -> None:
    """One provider call in the metrics: its outcome class and its duration, labelled by
    channel and provider kind (never the account)."""
    channel = job.channel.value
    provider = bounded(account.vendor, PROVIDER_KINDS)
    outcome = SUCCESS if failure is None else failure.failure_class.value
    PROVIDER_CALLS.labels(channel, provider, outcome).inc()
    PROVIDER_CALL_SECONDS.labels(channel, provider).observe(seconds)


class PassRunner:
    """Runs passes; ``senders`` picks a sender per channel, ``sender`` for the rest."""

    def __init__(
        self,
        sender: Sender,
        clock: Clock,
        senders: Mapping[Channel, Sender] | None = None,
        *,
        guard: SandboxGuard | None = None,
        pacer: Pacer | None = None,
        deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
        pacing_wait: float = 0.0,
    ) -> None:
        """``deadline_seconds`` bounds each provider call as a whole (see
        ``homing.providers.deadline``); a pass over several providers may take longer.
        ``pacing_wait``: how long a job may wait in the worker for a full rate rule to
        free a slot before it is deferred instead (docs/architecture.md, "Pacing")."""
        self._deadline = deadline_seconds
        self._pacing_wait = pacing_wait
        self._sender = sender
        self._pacer = pacer
        self._senders = dict(senders or {})
        self._clock = clock
        # Without sandbox URLs, a test key's job is refused by every provider.
        self._guard = guard or SandboxGuard()

    async def _pace(self, account: ProviderAccount, job: Job) -> None:
        """Take a slot of every rate rule of ``account``, waiting up to ``pacing_wait``
        in all for a full one to free one; past that the provider is throttled for the
        job (no call made, no pass spent: the job is deferred to the slot)."""
        if self._pacer is None:
            return
        waited = 0.0
        pacer = self._pacer
        while paced := await pacer.take(account, job):
            if waited + paced.wait > self._pacing_wait or not pacer.may_wait(paced):
                wait = pacer.deferral(paced) if self._pacing_wait else paced.wait
                raise ProviderFailure(FailureClass.THROTTLED, paced.detail, retry_after=wait)
            # Waiting here keeps the job's place and lease; a deferral would cost a
            # claim and a write per job per window while a broadcast drains.
            with pacer.waiting(paced):
                await asyncio.sleep(paced.wait)
            waited += paced.wait

    def _sender_for(self, job: Job) -> Sender:
        return self._senders.get(job.channel, self._sender)

    def replays(self, job: Job, account: ProviderAccount) -> bool:
        """Whether calling ``account`` again for ``job`` is a replay, not a second
        send: its vendor takes the job's idempotency key (``supports_idempotency``)."""
        return self._sender_for(job).supports_idempotency(account)

    async def run(
        self, job: Job, pass_number: int, accounts: Sequence[ProviderAccount]
    ) -> PassResult:
        """Try each candidate in order; record one Attempt per provider call."""
        outcome = PassResult()
        for account in accounts:
            started = self._clock.now()
            t0 = time.perf_counter()
            failure: ProviderFailure | None = None
            result: SendResult | None = None
            calls = outcome.calls
            with tracing.provider_call(account.vendor, account.id) as span:
                try:
                    result = await self._call(job, account, outcome)
                except ProviderFailure as exc:
                    failure = exc
                    span.set(tracing.OUTCOME, exc.failure_class.value)
                    span.set(tracing.HTTP_STATUS, exc.status_code)
                    span.failed()
                else:
                    span.set(tracing.OUTCOME, SUCCESS)
                    span.set(tracing.HTTP_STATUS, result.status_code)
            seconds = time.perf_counter() - t0
            if outcome.calls > calls:  # a paced or refused provider was not called
                count_call(job, account, failure, seconds)
            duration_ms = int(seconds * 1000)
            attempt = self._attempt(
                job, pass_number, account, started, duration_ms, failure, result
            )
            outcome.attempts.append(attempt)
            if failure is None:
                outcome.accepted_by, outcome.result = account, result
                return outcome
            if self._stop_after(job, account, failure, outcome):
                return outcome
        return outcome

    async def _call(self, job: Job, account: ProviderAccount, outcome: PassResult) -> SendResult:
        """One provider call under the call deadline; every failure a ProviderFailure."""
        try:
            sender = self._sender_for(job)
            if job.test:
                self._guard.check(job, account.vendor, destination(sender, account, job))
            await self._pace(account, job)
            outcome.calls += 1
            return await within(self._deadline, sender.send(account, job))
        except DeadlineExceeded as exc:
            # The request may have reached the provider: at_most_once must not resend.
            raise ProviderFailure(
                FailureClass.UNCERTAIN,
                f"{account.vendor}: {exc} (the request may have been sent)",
            ) from None
        except DecryptionError:
            raise ProviderFailure(
                FailureClass.PROVIDER_PERMANENT, "stored credentials cannot be decrypted"
            ) from None
        except ProviderFailure:
            raise
        except InvalidRequest as exc:
            # Stored settings the adapter refuses (e.g. an SMTP timeout stored before it
            # was bounded): this provider cannot be used until it is registered again.
            raise ProviderFailure(
                FailureClass.PROVIDER_PERMANENT, f"{account.vendor}: {exc.message}"
            ) from None
        except Exception as exc:  # an adapter bug must not lose the job
            log.exception("provider adapter raised unexpectedly", extra={"job_id": job.id})
            raise ProviderFailure(
                FailureClass.TRANSIENT, f"adapter error: {type(exc).__name__}"
            ) from None

    def _stop_after(
        self, job: Job, account: ProviderAccount, failure: ProviderFailure, outcome: PassResult
    ) -> bool:
        cls = failure.failure_class
        outcome.failures.append(
            PassFailure(account.id, cls, named(account.vendor, failure.detail), failure.retry_after)
        )
        if cls is FailureClass.PROVIDER_PERMANENT:
            outcome.skip.append(account.id)
        if cls is FailureClass.MESSAGE_PERMANENT:
            outcome.suppress = failure.suppress
            return True
        if cls is FailureClass.UNCERTAIN and job.delivery is DeliveryMode.AT_MOST_ONCE:
            # Sending elsewhere could deliver twice. Only an idempotent provider may be
            # asked again (with the same key); otherwise the job ends here.
            if self.replays(job, account):
                outcome.only = account.id
            else:
                outcome.uncertain_give_up = True
            return True
        return False

    def _attempt(
        self,
        job: Job,
        pass_number: int,
        account: ProviderAccount,
        started: float,
        duration_ms: int,
        failure: ProviderFailure | None,
        result: SendResult | None = None,
    ) -> Attempt:
        status_code = result.status_code if result else None
        source = failure or result
        excerpt = source.response_excerpt if source else None
        return Attempt(
            job_id=job.id,
            tenant_id=job.tenant_id,
            number=pass_number,
            provider_account_id=None if account.id == DIRECT_TARGET_ID else account.id,
            provider=account.vendor,
            outcome=(
                AttemptOutcome.SUCCESS
                if failure is None
                else AttemptOutcome(failure.failure_class.value)
            ),
            status_code=failure.status_code if failure else status_code,
            error=failure.detail if failure else None,
            started_at=as_datetime(started),
            duration_ms=duration_ms,
            response_excerpt=excerpt,
        )
