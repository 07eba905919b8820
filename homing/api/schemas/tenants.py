"""Bodies of the admin API's tenant routes (``/v1/admin/tenants``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from homing.api.schemas.shared import Name, Page, Strict
from homing.api.schemas.usage import UsagePublic
from homing.managers.plans import Limits
from homing.managers.tenancy import MAX_RATE_PER_MINUTE
from homing.models import Tenant

PlanName = Literal["FREE", "INDIE", "STARTUP"]
RatePerMinute = Annotated[int, Field(ge=1, le=MAX_RATE_PER_MINUTE)]
# Quota name ("webhook", "email+webhook") → monthly limit, or null to lift the plan's.
CustomQuotas = dict[Annotated[str, StringConstraints(max_length=100)], int | None]


class TenantCreate(Strict):
    name: Name
    plan: PlanName = "FREE"
    rate_limit_per_minute: RatePerMinute | None = None
    quotas: CustomQuotas | None = None


class TenantPatch(Strict):
    """Fields left out stay as they are; ``null`` returns a limit to the plan's."""

    name: Name | None = None
    plan: PlanName | None = None
    rate_limit_per_minute: RatePerMinute | None = None
    quotas: CustomQuotas | None = None


class LimitsPublic(BaseModel):
    rate_per_minute: int
    quotas: dict[str, int]
    priority: str | None

    @classmethod
    def of(cls, limits: Limits) -> LimitsPublic:
        return cls(
            rate_per_minute=limits.rate_per_minute,
            quotas={q.name: q.limit for q in limits.quotas},
            priority=limits.priority.name if limits.priority is not None else None,
        )


class TenantPublic(BaseModel):
    id: str
    name: str
    plan: str
    suspended: bool
    created_at: datetime
    custom_rate_limit_per_minute: int | None
    custom_quotas: dict[str, int | None] | None
    limits: LimitsPublic

    @classmethod
    def of(cls, tenant: Tenant, limits: Limits) -> TenantPublic:
        return cls(
            id=tenant.id,
            name=tenant.name,
            plan=tenant.plan.value,
            suspended=tenant.suspended,
            created_at=tenant.created_at,
            custom_rate_limit_per_minute=tenant.rate_limit_per_minute,
            custom_quotas=tenant.quota_overrides,
            limits=LimitsPublic.of(limits),
        )


class TenantCreated(TenantPublic):
    api_key: str = Field(description="the tenant's first API key; shown this once")


class TenantDetail(TenantPublic):
    usage: UsagePublic


# The admin list of tenants (``homing tenant list`` prints the same page).
TenantList = Page[TenantPublic]
