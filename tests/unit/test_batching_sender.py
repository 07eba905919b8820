"""``BatchingEmailSender``'s buffers: when a batch leaves, what goes alone, and that a
job cancelled while waiting (its claim lost) is left out of the call."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from homing.channels import Channel
from homing.crypto import MasterKey, Sealer, generate_master_key
from homing.dispatch import batching
from homing.dispatch.batching import BatchingEmailSender, batchable
from homing.models import DeliveryMode, FailureClass, Job, ProviderAccount
from homing.providers.base import OutgoingEmail, ProviderFailure, SendResult
from tests.job_values import a_job


class FakeBatchAdapter:
    """Answers every batch with one id per email; counts the calls."""

    def __init__(self, calls: list[list[str]], hang: bool = False) -> None:
        self.calls = calls
        self.hang = hang

    async def send_batch(
        self, emails: list[OutgoingEmail], idempotency_key: str | None = None
    ) -> list[SendResult | ProviderFailure]:
        self.calls.append([e.job_id for e in emails])
        if self.hang:
            await asyncio.sleep(10)
        return [SendResult(f"m-{e.job_id}", 200) for e in emails]

    async def send(self, email: OutgoingEmail) -> SendResult:
        self.calls.append(["single:" + email.job_id])
        return SendResult("one", 200)


def account(provider: str = "resend") -> ProviderAccount:
    return ProviderAccount(
        id=f"acct-{provider}",
        tenant_id="t1",
        channel=Channel.EMAIL,
        vendor=provider,
        priority=0,
        enabled=True,
        credentials_sealed="",
        credentials_preview="",
        config={},
        created_at=datetime.now(UTC),
    )


def job(
    n: int,
    delivery: DeliveryMode = DeliveryMode.AT_LEAST_ONCE,
    ordering_key: str | None = None,
    extra: dict[str, Any] | None = None,
) -> Job:
    payload = {"to": f"u{n}@example.com", "from": "a@acme.test", "subject": "s", "text": "t"}
    now = datetime.now(UTC)
    return a_job(
        id=f"job-{n}",
        tenant_id="t1",
        payload={**payload, **(extra or {})},
        delivery=delivery,
        created_at=now,
        updated_at=now,
        ordering_key=ordering_key,
    )


def sender(
    calls: list[list[str]], monkeypatch: pytest.MonkeyPatch, window: float, **kw: Any
) -> BatchingEmailSender:
    made = BatchingEmailSender(
        Sealer(MasterKey.from_b64(generate_master_key())),
        None,
        window_seconds=window,
        deadline_seconds=0.5,
    )
    adapter = FakeBatchAdapter(calls, **kw)
    monkeypatch.setattr(made, "adapter", lambda _account: adapter)
    monkeypatch.setattr(batching.EmailSender, "adapter", lambda _self, _account: adapter)
    return made


async def test_a_full_buffer_leaves_at_once_and_the_rest_after_the_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[list[str]] = []
    s = sender(calls, monkeypatch, window=0.2)
    results = await asyncio.gather(*(s.send(account(), job(n)) for n in range(130)))
    assert [len(c) for c in calls] == [100, 30]
    assert [r.provider_message_id for r in results] == [f"m-job-{n}" for n in range(130)]


async def test_an_ordering_key_or_at_most_once_goes_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    s = sender(calls, monkeypatch, window=0.05)
    assert not batchable(job(1, ordering_key="k"))
    assert not batchable(job(2, delivery=DeliveryMode.AT_MOST_ONCE))
    assert not batchable(job(3, extra={"attachments": []}))
    await asyncio.gather(
        s.send(account(), job(1, ordering_key="k")),
        s.send(account(), job(2, delivery=DeliveryMode.AT_MOST_ONCE)),
        s.send(account(), job(3)),
        s.send(account(), job(4)),
    )
    assert sorted(calls) == [["job-3", "job-4"], ["single:job-1"], ["single:job-2"]]


async def test_a_job_cancelled_while_waiting_is_not_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    s = sender(calls, monkeypatch, window=0.1)
    kept = asyncio.ensure_future(s.send(account(), job(1)))
    lost = asyncio.ensure_future(s.send(account(), job(2)))
    await asyncio.sleep(0.01)
    lost.cancel()
    assert (await kept).provider_message_id == "m-job-1"
    assert calls == [["job-1"]]


async def test_a_batch_past_the_deadline_is_uncertain_for_every_job(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[list[str]] = []
    s = sender(calls, monkeypatch, window=0.01, hang=True)
    outcomes = await asyncio.gather(
        *(s.send(account(), job(n)) for n in range(3)), return_exceptions=True
    )
    assert all(
        isinstance(o, ProviderFailure) and o.failure_class is FailureClass.UNCERTAIN
        for o in outcomes
    )
    assert len(calls) == 1


async def test_a_vendor_without_a_batch_endpoint_sends_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[list[str]] = []
    s = sender(calls, monkeypatch, window=0.05)
    await asyncio.gather(*(s.send(account("smtp"), job(n)) for n in range(2)))
    assert sorted(calls) == [["single:job-0"], ["single:job-1"]]
