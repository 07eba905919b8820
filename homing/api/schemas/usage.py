"""Bodies of ``/v1/usage``: the plan, the rate limit and the quotas used."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from homing.managers.plans import month_end
from homing.managers.tenancy import UsageReport


def _utc(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


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
