"""Vendor pacing presets, priority shares and the chat scopes, on an injected clock."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from homing.channels import Channel
from homing.clock import ManualClock
from homing.models import Job, Priority, ProviderAccount
from homing.ratelimit import memory_limiter
from homing.timing.pacing import Pacer, RateRule, account_rules, is_group_chat
from homing.timing.presets import share_of


def _account(provider: str = "telegram", **config: Any) -> ProviderAccount:
    return ProviderAccount(
        id=f"pa_{provider}",
        tenant_id="t",
        channel=Channel.CHAT,
        vendor=provider,
        priority=1,
        enabled=True,
        credentials_sealed="",
        credentials_preview="",
        config=config,
        created_at=datetime.now(UTC),
    )


def _job(to: str, priority: Priority = Priority.NORMAL) -> Any:
    # Pacing reads only the channel, the payload and the priority of a job.
    job: Any = Job.__new__(Job)
    object.__setattr__(job, "channel", Channel.CHAT)
    object.__setattr__(job, "payload", {"to": to, "kind": "telegram"})
    object.__setattr__(job, "priority", priority)
    return job


@pytest.mark.parametrize(
    ("limit", "priority", "share"),
    [
        (30, Priority.CRITICAL, 30),
        (30, Priority.NORMAL, 29),
        (30, Priority.LOW, 27),
        (20, Priority.LOW, 18),
        (2, Priority.LOW, 2),
        (1, Priority.LOW, 1),
    ],
)
def test_lower_priorities_fill_only_their_share_of_a_rule(
    limit: int, priority: Priority, share: int
) -> None:
    assert share_of(limit, priority) == share


def test_an_account_gets_its_vendors_preset_unless_it_sets_rules() -> None:
    assert [(r.scope, r.limit, r.per_seconds) for r in account_rules(_account())] == [
        ("account", 30, 1),
        ("individual", 1, 1),
        ("group", 20, 60),
    ]
    assert [(r.scope, r.limit) for r in account_rules(_account("slack"))] == [("account", 1)]
    assert account_rules(_account("resend")) == []
    assert account_rules(_account(rate_rules=[])) == []
    own = [{"scope": "account", "limit": 5, "per_seconds": 1}]
    assert account_rules(_account(rate_rules=own)) == [
        RateRule(scope="account", limit=5, per_seconds=1)
    ]


@pytest.mark.parametrize(("to", "group"), [("4242", False), ("-1001234", True), ("@channel", True)])
def test_negative_ids_and_channels_are_groups(to: str, group: bool) -> None:
    assert is_group_chat(to) is group


async def test_one_message_a_second_per_individual_chat_but_twenty_a_minute_per_group() -> None:
    clock = ManualClock(1_000.0)
    pacer = Pacer(memory_limiter(clock=clock), clock, margin=0.0)
    account = _account()
    assert await pacer.take(account, _job("42")) is None
    paced = await pacer.take(account, _job("42"))
    assert paced is not None and paced.rule.scope == "individual" and paced.wait == 1.0
    assert await pacer.take(account, _job("43")) is None
    for _ in range(20):  # CRITICAL: the whole rule (a NORMAL job fills 19 of it)
        assert await pacer.take(account, _job("-100", Priority.CRITICAL)) is None
        clock.advance(0.05)
    group = await pacer.take(account, _job("-100", Priority.CRITICAL))
    assert group is not None and group.rule.scope == "group"


async def test_critical_finds_the_slot_a_low_broadcast_leaves() -> None:
    clock = ManualClock(1_000.0)
    pacer = Pacer(memory_limiter(clock=clock), clock)
    account = _account()
    taken = [await pacer.take(account, _job(str(n), Priority.LOW)) for n in range(30)]
    assert taken.count(None) == 27
    assert all(p is not None and p.rule.scope == "account" for p in taken[27:])
    assert await pacer.take(account, _job("9999", Priority.CRITICAL)) is None


async def test_the_margin_keeps_a_window_longer_than_the_vendors() -> None:
    clock = ManualClock(1_000.0)
    pacer = Pacer(memory_limiter(clock=clock), clock, margin=0.5)
    account = _account("slack")
    assert await pacer.take(account, _job("#a")) is None
    clock.advance(1.0)
    paced = await pacer.take(account, _job("#a"))
    assert paced is not None and paced.wait == pytest.approx(0.5)
    clock.advance(0.5)
    assert await pacer.take(account, _job("#a")) is None


async def test_one_windows_worth_waits_and_the_rest_is_deferred_one_slot_apart() -> None:
    clock = ManualClock(1_000.0)
    pacer = Pacer(memory_limiter(clock=clock), clock, margin=0.0)
    account = _account("slack")
    assert await pacer.take(account, _job("#a")) is None
    paced = await pacer.take(account, _job("#a"))
    assert paced is not None and pacer.may_wait(paced)
    with pacer.waiting(paced):
        assert not pacer.may_wait(paced)
        deferrals = [pacer.deferral(paced) for _ in range(3)]
    assert pacer.may_wait(paced)
    assert deferrals == [1.0, 2.0, 3.0]
