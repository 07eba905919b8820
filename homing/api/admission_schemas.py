"""Bodies of the admission routes: API keys, usage, the email batch, the admin API."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from homing.api.base_schemas import Page, Strict
from homing.api.schemas import EmailCreate
from homing.managers.plans import Limits, month_end
from homing.managers.tenancy import MAX_RATE_PER_MINUTE, UsageReport
from homing.models import Tenant
from homing.store.keys import ApiKey

Name = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]
PlanName = Literal["FREE", "INDIE", "STARTUP"]
RatePerMinute = Annotated[int, Field(ge=1, le=MAX_RATE_PER_MINUTE)]
# Quota name ("webhook", "email+webhook") → monthly limit, or null to lift the plan's.
CustomQuotas = dict[Annotated[str, StringConstraints(max_length=100)], int | None]

MAX_BATCH = 1000


def _utc(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


class ApiKeyCreate(Strict):
    name: Name = "unnamed"
    test: bool = False


class ApiKeyPublic(BaseModel):
    id: str
    name: str
    prefix: str
    test: bool
    created_at: datetime
    last_used_at: datetime | None

    @classmethod
    def of(cls, key: ApiKey) -> ApiKeyPublic:
        return cls(
            id=key.id,
            name=key.name,
            prefix=key.prefix,
            test=key.test,
            created_at=key.created_at,
            last_used_at=key.last_used_at,
        )


class ApiKeyIssued(ApiKeyPublic):
    key: str = Field(description="the API key itself; shown this once, never again")


class RateLimitPublic(BaseModel):
    limit: int
    window_seconds: int
    remaining: int
    reset_seconds: int


class QuotaPublic(BaseModel):
    name: str
    channels: list[str]
    limit: int
    used: int
    remaining: int
    resets_at: str


class UsagePublic(BaseModel):
    plan: str
    period: str
    resets_at: str
    rate_limit: RateLimitPublic
    used: dict[str, int]
    quotas: list[QuotaPublic]

    @classmethod
    def of(cls, report: UsageReport, window_seconds: int) -> UsagePublic:
        return cls(
            plan=report.limits.plan.value,
            period=report.period,
            resets_at=_utc(month_end(report.period)),
            rate_limit=RateLimitPublic(
                limit=report.rate.limit,
                window_seconds=window_seconds,
                remaining=report.rate.remaining,
                reset_seconds=report.rate.reset_in(),
            ),
            used={channel.value: n for channel, n in report.used.items()},
            quotas=[
                QuotaPublic(
                    name=q.quota.name,
                    channels=sorted(c.value for c in q.quota.channels),
                    limit=q.quota.limit,
                    used=q.used,
                    remaining=q.remaining,
                    resets_at=_utc(q.resets_at),
                )
                for q in report.quotas
            ],
        )


class EmailBatchItem(EmailCreate):
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=255)


class EmailBatchCreate(Strict):
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_BATCH)


class ItemError(BaseModel):
    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class BatchItemResult(BaseModel):
    index: int
    id: str | None = None
    status: str | None = None
    replayed: bool | None = None
    error: ItemError | None = None


class BatchResult(BaseModel):
    accepted: int
    replayed: int
    rejected: int
    results: list[BatchItemResult]


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
