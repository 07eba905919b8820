"""Plans as data, custom limits over them, and the calendar months quotas run by."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from homing.channels import Channel
from homing.managers.plans import (
    effective_limits,
    load_plans,
    make_quota,
    month_end,
    month_of,
    parse_plans,
    quota_channels,
    quota_usage,
)
from homing.models import Plan, Priority, Tenant

NOW = datetime(2026, 5, 17, tzinfo=UTC)


def _tenant(plan: Plan, **custom: object) -> Tenant:
    return Tenant(id="t", name="t", plan=plan, suspended=False, created_at=NOW, **custom)  # type: ignore[arg-type]


def test_the_shipped_plans_are_the_designed_ones() -> None:
    plans = load_plans()
    free, indie, startup = plans[Plan.FREE], plans[Plan.INDIE], plans[Plan.STARTUP]
    assert (free.rate_per_minute, free.priority) == (5, Priority.LOW)
    assert {q.name: q.limit for q in free.quotas} == {"email+webhook": 100, "chat": 100, "sms": 10}
    assert (indie.rate_per_minute, indie.priority) == (50, None)
    assert {q.name: q.limit for q in indie.quotas} == {"webhook": 4000, "chat": 10000, "sms": 1000}
    assert startup.rate_per_minute == 200
    assert {q.name: q.limit for q in startup.quotas} == {
        "webhook": 15000,
        "chat": 50000,
        "sms": 5000,
    }
    assert indie.quotas_for(Channel.EMAIL) == ()
    assert [q.name for q in free.quotas_for(Channel.WEBHOOK)] == ["email+webhook"]


def test_custom_limits_override_the_plan_quota_by_quota() -> None:
    plans = load_plans()
    tenant = _tenant(
        Plan.INDIE,
        rate_limit_per_minute=7,
        quota_overrides={"email": 10, "webhook+email": 20, "webhook": None},
    )
    limits = effective_limits(tenant, plans)
    assert limits.rate_per_minute == 7
    assert {q.name: q.limit for q in limits.quotas} == {
        "email": 10,
        "email+webhook": 20,
        "chat": 10000,
        "sms": 1000,
    }
    assert effective_limits(_tenant(Plan.INDIE), plans) == plans[Plan.INDIE]


def test_quota_names_are_channels_joined_by_plus() -> None:
    assert quota_channels("webhook+email") == {Channel.EMAIL, Channel.WEBHOOK}
    assert make_quota("webhook+email", 3).name == "email+webhook"
    for bad in ("fax", "email+", "email+email", ""):
        with pytest.raises(ValueError):
            quota_channels(bad)
    with pytest.raises(ValueError):
        make_quota("email", -1)


def test_plans_file_must_define_every_plan() -> None:
    with pytest.raises(KeyError):
        parse_plans("[plans.FREE]\nrate_per_minute = 1\n")


def test_months_are_utc_calendar_months() -> None:
    assert month_of(datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC).timestamp()) == "2026-01"
    assert month_of(datetime(2026, 2, 1, tzinfo=UTC).timestamp()) == "2026-02"
    assert month_end("2026-01") == datetime(2026, 2, 1, tzinfo=UTC)
    assert month_end("2026-12") == datetime(2027, 1, 1, tzinfo=UTC)


def test_quota_usage_sums_the_channels_of_each_quota() -> None:
    limits = effective_limits(_tenant(Plan.FREE), load_plans())
    usages = quota_usage(limits, {Channel.EMAIL: 30, Channel.WEBHOOK: 80}, "2026-05")
    [usage] = [u for u in usages if u.quota.name == "email+webhook"]
    assert (usage.used, usage.remaining) == (110, 0)
    [sms] = [u for u in usages if u.quota.name == "sms"]
    assert (sms.used, sms.remaining) == (0, 10)
    assert usage.resets_at == datetime(2026, 6, 1, tzinfo=UTC)
