"""Plans and a tenant's effective limits: request rate, monthly quotas, forced priority.

Plans are data (``homing/managers/plans.toml``, shipped with the package). A quota is named
after the channels it counts, joined by ``+`` (``"webhook"``, ``"email+webhook"``);
a channel no quota names is unlimited. A tenant's custom rate limit and custom quotas
override its plan's, quota by quota; a custom quota of ``None`` lifts the plan's quota.
Quotas run per calendar month in UTC.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from typing import Any

from homing.channels import Channel
from homing.clock import month_end as month_end
from homing.clock import month_of as month_of
from homing.models import Plan, Priority, Tenant
from homing.models import Quota as Quota

RATE_WINDOW_SECONDS = 60


@dataclass(frozen=True, slots=True)
class Limits:
    """What a tenant may do: its plan's figures with the tenant's overrides applied."""

    plan: Plan
    rate_per_minute: int
    quotas: tuple[Quota, ...]
    priority: Priority | None = None

    def quotas_for(self, channel: Channel) -> tuple[Quota, ...]:
        return tuple(q for q in self.quotas if channel in q.channels)


def quota_channels(name: str) -> frozenset[Channel]:
    """``"email+webhook"`` → {EMAIL, WEBHOOK}; ValueError for anything else."""
    parts = [p.strip() for p in name.split("+")]
    try:
        channels = frozenset(Channel(p) for p in parts)
    except ValueError:
        known = ", ".join(c.value for c in Channel)
        raise ValueError(f"a quota names channels joined by '+' ({known})") from None
    if len(channels) != len(parts):
        raise ValueError("a quota names each channel once")
    return channels


def quota_name(channels: frozenset[Channel]) -> str:
    """The canonical name of a quota: its channels in alphabetical order."""
    return "+".join(sorted(c.value for c in channels))


def make_quota(name: str, limit: int) -> Quota:
    if limit < 0:
        raise ValueError("a quota limit is zero or more")
    channels = quota_channels(name)
    return Quota(quota_name(channels), channels, limit)


def parse_plans(text: str) -> dict[Plan, Limits]:
    """Read plans from TOML text; every Plan must be defined."""
    data: dict[str, Any] = tomllib.loads(text)["plans"]
    plans: dict[Plan, Limits] = {}
    for plan in Plan:
        spec = data[plan.value]
        priority = spec.get("priority")
        plans[plan] = Limits(
            plan=plan,
            rate_per_minute=int(spec["rate_per_minute"]),
            quotas=tuple(make_quota(n, int(v)) for n, v in spec.get("quotas", {}).items()),
            priority=Priority[priority] if priority else None,
        )
    return plans


def load_plans() -> dict[Plan, Limits]:
    """The plans shipped with Homing (``homing/managers/plans.toml``)."""
    return parse_plans(resources.files("homing.managers").joinpath("plans.toml").read_text())


def effective_limits(tenant: Tenant, plans: Mapping[Plan, Limits]) -> Limits:
    """The tenant's plan, overridden by its custom rate limit and custom quotas."""
    base = plans[tenant.plan]
    quotas = {q.name: q for q in base.quotas}
    for name, limit in (tenant.quota_overrides or {}).items():
        channels = quota_channels(name)
        canonical = quota_name(channels)
        if limit is None:
            quotas.pop(canonical, None)
        else:
            quotas[canonical] = Quota(canonical, channels, limit)
    rate = tenant.rate_limit_per_minute
    return Limits(
        plan=base.plan,
        rate_per_minute=base.rate_per_minute if rate is None else rate,
        quotas=tuple(quotas[n] for n in sorted(quotas)),
        priority=base.priority,
    )


@dataclass(frozen=True, slots=True)
class QuotaUsage:
    """How much of one monthly quota a tenant has used in the current period."""

    quota: Quota
    used: int
    period: str

    @property
    def remaining(self) -> int:
        return max(0, self.quota.limit - self.used)

    @property
    def resets_at(self) -> datetime:
        return month_end(self.period)


def quota_usage(limits: Limits, used: Mapping[Channel, int], period: str) -> list[QuotaUsage]:
    """Each quota of ``limits`` against this period's per-channel counts."""
    return [QuotaUsage(q, sum(used.get(c, 0) for c in q.channels), period) for q in limits.quotas]
