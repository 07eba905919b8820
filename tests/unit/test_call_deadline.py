"""The call deadline in a pass: a call that never finishes ends as ``uncertain``."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from homing.channels import Channel
from homing.clock import ManualClock
from homing.dispatch.passes import PassRunner
from homing.errors import InvalidRequest
from homing.models import AttemptOutcome, DeliveryMode, Job, ProviderAccount
from homing.providers.base import SendResult
from homing.providers.deadline import DeadlineExceeded, within
from tests.job_values import a_job

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _job(delivery: DeliveryMode) -> Job:
    return a_job(delivery=delivery, created_at=NOW, updated_at=NOW)


def _account(account_id: str) -> ProviderAccount:
    return ProviderAccount(
        id=account_id,
        tenant_id="t",
        channel=Channel.EMAIL,
        vendor="sendgrid",
        priority=1,
        enabled=True,
        credentials_sealed="",
        credentials_preview="",
        config={},
        created_at=NOW,
    )


class Trickling:
    """A sender whose first call never finishes (a receiver that trickles for ever)."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.cancelled = 0

    def supports_idempotency(self, account: ProviderAccount) -> bool:
        return False

    async def send(self, account: ProviderAccount, job: Job) -> SendResult:
        self.calls.append(account.id)
        if len(self.calls) > 1:
            return SendResult("m-1", 202)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        raise AssertionError("unreachable")


class Refusing(Trickling):
    async def send(self, account: ProviderAccount, job: Job) -> SendResult:
        raise InvalidRequest("SMTP config 'timeout' must be a number of seconds")


async def test_a_call_past_the_deadline_is_cut_and_uncertain() -> None:
    sender = Trickling()
    runner = PassRunner(sender, ManualClock(), deadline_seconds=0.01)
    result = await runner.run(_job(DeliveryMode.AT_LEAST_ONCE), 1, [_account("a"), _account("b")])
    assert sender.cancelled == 1
    first, second = result.attempts
    assert first.outcome is AttemptOutcome.UNCERTAIN
    assert first.error is not None and "deadline" in first.error
    # At least once: the next provider is asked, as for any uncertain outcome.
    assert second.outcome is AttemptOutcome.SUCCESS
    assert result.accepted_by is not None and result.accepted_by.id == "b"


async def test_an_at_most_once_job_cut_by_the_deadline_is_not_sent_elsewhere() -> None:
    sender = Trickling()
    runner = PassRunner(sender, ManualClock(), deadline_seconds=0.01)
    result = await runner.run(_job(DeliveryMode.AT_MOST_ONCE), 1, [_account("a"), _account("b")])
    assert sender.calls == ["a"]
    assert result.uncertain_give_up
    assert result.accepted_by is None


async def test_settings_an_adapter_refuses_make_the_provider_unusable() -> None:
    runner = PassRunner(Refusing(), ManualClock())
    result = await runner.run(_job(DeliveryMode.AT_LEAST_ONCE), 1, [_account("a")])
    assert result.skip == ["a"]
    assert result.attempts[0].outcome is AttemptOutcome.PROVIDER_PERMANENT


async def test_a_timeout_of_the_call_itself_is_not_the_deadline() -> None:
    async def times_out() -> None:
        raise TimeoutError("the call's own")

    with pytest.raises(TimeoutError, match="the call's own"):
        await within(30, times_out())
    assert not issubclass(DeadlineExceeded, TimeoutError)
