"""The notices a periodic check finds: 80 % and 100 % of a monthly quota, and the daily
dead-letter digest.

Both are keyed so that they are sent once however often, and by however many processes,
the check runs: a quota notice by (quota, month) and threshold, the digest by its date.
Each process also remembers what it already noticed, so a check that finds nothing new
costs a few grouped reads and no writes.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from homing.channels import Channel
from homing.clock import Clock, as_datetime, month_of
from homing.managers.admission import Admission
from homing.managers.notices import NoticeKind, Notices
from homing.managers.plans import quota_usage
from homing.store.tenants import TenantStore

__all__ = ["NoticeChecks"]

WARNING_SHARE = 0.8


class NoticeChecks:
    """Finds quota thresholds crossed this month and yesterday's dead letters."""

    def __init__(
        self, notices: Notices, tenants: TenantStore, admission: Admission, clock: Clock
    ) -> None:
        self._notices = notices
        self._tenants = tenants
        self._admission = admission
        self._clock = clock
        self._noticed: set[tuple[str, str, str]] = set()  # (tenant, kind, key) this month
        self._period = ""
        self._digest_done = ""

    async def run(self) -> int:
        """One check of both; how many notices it recorded."""
        return await self.quotas() + await self.digest()

    async def quotas(self) -> int:
        period = month_of(self._clock.now())
        if period != self._period:
            self._period, self._noticed = period, set()
        recorded = 0
        for tenant_id, used in sorted((await self._notices.store.usage(period)).items()):
            recorded += await self._quota(tenant_id, used, period)
        return recorded

    async def _quota(self, tenant_id: str, used: dict[Channel, int], period: str) -> int:
        tenant = await self._tenants.get(tenant_id)
        if tenant is None:
            return 0
        recorded = 0
        for usage in quota_usage(self._admission.limits(tenant), used, period):
            limit = usage.quota.limit
            if limit <= 0 or usage.used < WARNING_SHARE * limit:
                continue
            full = usage.used >= limit
            kind = NoticeKind.QUOTA_EXHAUSTED if full else NoticeKind.QUOTA_WARNING
            key = f"{usage.quota.name}:{period}"
            if (tenant_id, kind.value, key) in self._noticed:
                continue
            self._noticed.add((tenant_id, kind.value, key))
            data = {
                "quota": usage.quota.name,
                "limit": limit,
                "used": usage.used,
                "period": period,
                "resets_at": usage.resets_at.isoformat().replace("+00:00", "Z"),
            }
            if await self._notices.notify(tenant_id, kind, key, data) is not None:
                recorded += 1
        return recorded

    async def digest(self) -> int:
        """Yesterday's dead letters (and held notices), per tenant that had any."""
        today = _midnight(as_datetime(self._clock.now()))
        yesterday = today - timedelta(days=1)
        date = yesterday.date().isoformat()
        if date == self._digest_done:
            return 0
        store = self._notices.store
        dead = await store.dead_letters_between(yesterday, today)
        held = await store.held_between(yesterday, today)
        recorded = 0
        for tenant_id in sorted(dead.keys() | held.keys()):
            data = {
                "date": date,
                "dead_letters": dead.get(tenant_id, 0),
                "held_notices": held.get(tenant_id, 0),
            }
            notice = await self._notices.notify(
                tenant_id, NoticeKind.DEAD_LETTER_DIGEST, date, data
            )
            recorded += notice is not None
        self._digest_done = date
        return recorded


def _midnight(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)
