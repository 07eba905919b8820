"""Operator actions on tenants, and usage reports: shared by the admin API, the tenant
API (``GET /v1/usage``) and the ``homing tenant …`` commands."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from homing.channels import Channel
from homing.clock import Clock
from homing.domain.audit import AuditEvent
from homing.errors import InvalidRequest, NotFound
from homing.managers.admission import Admission
from homing.managers.plans import (
    Limits,
    QuotaUsage,
    month_of,
    quota_channels,
    quota_name,
    quota_usage,
)
from homing.models import Plan, Tenant
from homing.ratelimit import RateDecision
from homing.store.tenants import TenantPage, TenantStore
from homing.store.usage import UsageStore

MAX_RATE_PER_MINUTE = 1_000_000
MAX_QUOTA = 1_000_000_000


@dataclass(kw_only=True, frozen=True, slots=True)
class UsageReport:
    """A tenant's limits and what it used of them this period."""

    tenant: Tenant
    limits: Limits
    period: str
    used: dict[Channel, int]
    quotas: list[QuotaUsage]
    rate: RateDecision


def check_quota_overrides(overrides: Mapping[str, Any]) -> dict[str, int | None]:
    """Canonical custom quotas (``{"email+webhook": 500, "webhook": None}``).

    A limit is a whole number from 0 to 10⁹, or None to lift the plan's quota.
    Raises InvalidRequest naming what is wrong.
    """
    checked: dict[str, int | None] = {}
    for name, limit in overrides.items():
        try:
            canonical = quota_name(quota_channels(name))
        except ValueError as exc:
            raise InvalidRequest(f"quota {name!r}: {exc}", {"quota": name}) from None
        valid = limit is None or (
            isinstance(limit, int) and not isinstance(limit, bool) and 0 <= limit <= MAX_QUOTA
        )
        if not valid:
            raise InvalidRequest(
                f"quota {name!r}: the limit is a whole number from 0 to {MAX_QUOTA}, or null",
                {"quota": name},
            )
        checked[canonical] = limit
    return checked


def check_rate(rate: int | None) -> int | None:
    if rate is not None and not 1 <= rate <= MAX_RATE_PER_MINUTE:
        raise InvalidRequest(
            f"a rate limit is from 1 to {MAX_RATE_PER_MINUTE} requests a minute, or null",
            {"rate_limit_per_minute": rate},
        )
    return rate


class TenantAdmin:
    """The operator's tenant manager: create, list, change, suspend and report usage."""

    def __init__(
        self, tenants: TenantStore, usage: UsageStore, admission: Admission, clock: Clock
    ) -> None:
        self._tenants = tenants
        self._usage = usage
        self._admission = admission
        self._clock = clock

    async def create(
        self,
        name: str,
        plan: Plan = Plan.FREE,
        *,
        rate_limit_per_minute: int | None = None,
        quotas: Mapping[str, Any] | None = None,
        audit: AuditEvent | None = None,
    ) -> tuple[Tenant, str]:
        """A new tenant and its first API key (returned once); ``audit`` is recorded
        with it."""
        return await self._tenants.create(
            name,
            plan,
            rate_limit_per_minute=check_rate(rate_limit_per_minute),
            quota_overrides=None if quotas is None else check_quota_overrides(quotas),
            audit=audit,
        )

    async def page(self, *, limit: int = 50, cursor: str | None = None) -> TenantPage:
        return await self._tenants.page(limit=limit, cursor=cursor)

    async def get(self, tenant_id: str) -> Tenant:
        tenant = await self._tenants.get(tenant_id)
        if tenant is None:
            raise NotFound("tenant not found")
        return tenant

    async def change(
        self, tenant_id: str, audit: AuditEvent | None = None, **changes: Any
    ) -> Tenant:
        """Change name, plan, ``rate_limit_per_minute`` or ``quota_overrides``, and
        record ``audit`` with the change.

        A None rate limit or quota overrides returns the tenant to its plan's.
        """
        if "rate_limit_per_minute" in changes:
            check_rate(changes["rate_limit_per_minute"])
        if changes.get("quota_overrides") is not None:
            changes["quota_overrides"] = check_quota_overrides(changes["quota_overrides"])
        tenant = await self._tenants.update(tenant_id, audit, **changes)
        self._admission.forget_tenant(tenant_id)
        return tenant

    async def suspend(self, tenant_id: str, audit: AuditEvent | None = None) -> Tenant:
        """Refuse the tenant's requests (403 ``tenant_suspended``); hold its queued jobs."""
        return await self.change(tenant_id, audit, suspended=True)

    async def unsuspend(self, tenant_id: str, audit: AuditEvent | None = None) -> Tenant:
        """Admit the tenant again and release its held jobs at once."""
        tenant = await self.change(tenant_id, audit, suspended=False)
        await self._tenants.release_held(tenant_id, self._clock.now())
        return tenant

    async def usage(self, tenant: Tenant) -> UsageReport:
        """This month's usage against the tenant's limits, and its sending rate now."""
        limits = self._admission.limits(tenant)
        period = month_of(self._clock.now())
        used = await self._usage.used(tenant.id, period)
        return UsageReport(
            tenant=tenant,
            limits=limits,
            period=period,
            used=used,
            quotas=quota_usage(limits, used, period),
            rate=await self._admission.rate_status(tenant),
        )
