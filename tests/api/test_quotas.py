"""Monthly quotas: counted in the accepting transaction, exact under concurrency."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from homing.channels import Channel
from homing.clock import ManualClock
from homing.domain.accepting import NewJob
from homing.domain.tenants import Principal
from homing.errors import QuotaExceeded
from homing.managers.plans import month_end, month_of
from homing.models import Plan, Priority, Queue
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import jobs
from tests.admission_helpers import EMAIL, admission_settings, send_email, usage
from tests.conftest import TenantClient, make_tenant


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return admission_settings(database_url, tmp_path, secret_key)


async def _job_count(services: Services, tenant_id: str) -> int:
    async with services.db.transaction() as conn:
        query = select(func.count()).select_from(jobs).where(jobs.c.tenant_id == tenant_id)
        return int((await conn.execute(query)).scalar_one())


async def _principal(services: Services, client: TenantClient) -> Principal:
    principal = await services.admission.authenticate(client.key)
    assert principal is not None
    return principal


def _webhook(tenant_id: str) -> NewJob:
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.WEBHOOK,
        queue=Queue.WEBHOOK,
        priority=Priority.NORMAL,
        payload={"url": "https://x.test"},
    )


@pytest.mark.sql("concurrent accepts against one usage row")
async def test_200_concurrent_sends_against_a_quota_of_100_accept_exactly_100(
    services: Services, api: httpx.AsyncClient
) -> None:
    free = await make_tenant(
        services, api, "t", Plan.FREE, rate_limit_per_minute=1000, provider=True
    )
    responses = await asyncio.gather(*(send_email(free) for _ in range(200)))
    codes = [r.status_code for r in responses]
    assert codes.count(202) == 100
    assert codes.count(403) == 100
    assert await _job_count(services, free.tenant_id) == 100
    assert (await usage(free))["used"]["email"] == 100


async def test_over_quota_is_403_naming_the_quota_and_its_reset(
    services: Services, api: httpx.AsyncClient, clock: ManualClock
) -> None:
    free = await make_tenant(
        services, api, "t", Plan.FREE, quota_overrides={"email+webhook": 1}, provider=True
    )
    assert (await send_email(free)).status_code == 202
    refused = await send_email(free)
    assert refused.status_code == 403
    error = refused.json()["error"]
    assert error["code"] == "quota_exceeded"
    period = month_of(clock.now())
    resets_at = month_end(period).isoformat().replace("+00:00", "Z")
    assert error["details"] == {
        "quota": "email+webhook",
        "limit": 1,
        "used": 1,
        "requested": 1,
        "period": period,
        "resets_at": resets_at,
    }
    assert "email+webhook" in error["message"] and resets_at in error["message"]
    assert "RateLimit-Remaining" in refused.headers


async def test_replays_and_invalid_requests_use_no_quota(
    services: Services, api: httpx.AsyncClient
) -> None:
    free = await make_tenant(
        services,
        api,
        "t",
        Plan.FREE,
        rate_limit_per_minute=100,
        quota_overrides={"email": 3},
        provider=True,
    )
    key = {"Idempotency-Key": "order-1"}
    first = await send_email(free, headers=key)
    assert first.status_code == 202
    for _ in range(3):
        again = await send_email(free, headers=key)
        assert again.status_code == 202
        assert again.headers["Idempotent-Replayed"] == "true"
    assert (await send_email(free, json={"to": "nobody"})).status_code == 422
    assert (await send_email(free, json={"provider": "nope"})).status_code == 422
    assert (await send_email(free, json={"to": "x@y.co"}, headers=key)).status_code == 422
    assert (await usage(free))["used"]["email"] == 1
    assert [(await send_email(free)).status_code for _ in range(3)] == [202, 202, 403]
    assert (await send_email(free, headers=key)).status_code == 202, "a replay is never refused"


async def test_quotas_start_again_with_the_calendar_month(
    services: Services, api: httpx.AsyncClient, clock: ManualClock
) -> None:
    free = await make_tenant(
        services, api, "t", Plan.FREE, quota_overrides={"email+webhook": 2}, provider=True
    )
    assert [(await send_email(free)).status_code for _ in range(3)] == [202, 202, 403]
    clock.advance(month_end(month_of(clock.now())).timestamp() - clock.now() + 1)
    assert (await send_email(free)).status_code == 202
    report = await usage(free)
    assert report["period"] == month_of(clock.now())
    assert report["used"]["email"] == 1


async def test_a_shared_quota_counts_email_and_webhooks_together(
    services: Services, api: httpx.AsyncClient
) -> None:
    free = await make_tenant(
        services, api, "t", Plan.FREE, quota_overrides={"email+webhook": 3}, provider=True
    )
    principal = await _principal(services, free)
    await services.admission.accept(principal, _webhook(free.tenant_id))
    await services.admission.accept(principal, _webhook(free.tenant_id))
    assert (await send_email(free)).status_code == 202
    with pytest.raises(QuotaExceeded):
        await services.admission.accept(principal, _webhook(free.tenant_id))
    assert (await send_email(free)).status_code == 403
    report = await usage(free)
    assert (report["used"]["email"], report["used"]["webhook"]) == (1, 2)


async def test_paid_email_is_unlimited_and_webhooks_are_not(
    services: Services, api: httpx.AsyncClient
) -> None:
    indie = await make_tenant(
        services, api, "t", Plan.INDIE, quota_overrides={"webhook": 1}, provider=True
    )
    principal = await _principal(services, indie)
    for _ in range(3):
        assert (await send_email(indie)).status_code == 202
    await services.admission.accept(principal, _webhook(indie.tenant_id))
    with pytest.raises(QuotaExceeded) as refused:
        await services.admission.accept(principal, _webhook(indie.tenant_id))
    assert refused.value.details["quota"] == "webhook"
    report = await usage(indie)
    assert report["used"]["email"] == 3
    assert [(q["name"], q["limit"], q["used"]) for q in report["quotas"]] == [
        ("chat", 10000, 0),
        ("sms", 1000, 0),
        ("webhook", 1, 1),
    ]


async def test_moving_to_a_plan_with_a_shared_quota_counts_the_month_so_far(
    services: Services, api: httpx.AsyncClient
) -> None:
    tenant = await make_tenant(services, api, "t", Plan.INDIE, provider=True)
    for _ in range(3):
        assert (await send_email(tenant)).status_code == 202
    await services.tenant_admin.change(
        tenant.tenant_id, plan=Plan.FREE, quota_overrides={"email+webhook": 4}
    )
    assert [(await send_email(tenant)).status_code for _ in range(2)] == [202, 403]


async def test_a_batch_that_would_overflow_a_quota_is_refused_whole(
    services: Services, api: httpx.AsyncClient
) -> None:
    free = await make_tenant(
        services, api, "t", Plan.FREE, quota_overrides={"email+webhook": 5}, provider=True
    )
    assert (await send_email(free)).status_code == 202
    refused = await free.post("/v1/notifications/email/batch", json={"messages": [EMAIL] * 5})
    assert refused.status_code == 403
    assert refused.json()["error"]["details"]["requested"] == 5
    assert "has 4 left" in refused.json()["error"]["message"]
    assert await _job_count(services, free.tenant_id) == 1
    fits = await free.post("/v1/notifications/email/batch", json={"messages": [EMAIL] * 4})
    assert fits.json()["accepted"] == 4


async def test_usage_shows_counts_limits_and_reset_times(
    services: Services, api: httpx.AsyncClient, clock: ManualClock
) -> None:
    startup = await make_tenant(services, api, "t", Plan.STARTUP, provider=True)
    await send_email(startup)
    report = await usage(startup)
    period = month_of(clock.now())
    assert report["plan"] == "STARTUP"
    assert report["period"] == period
    assert report["resets_at"] == month_end(period).isoformat().replace("+00:00", "Z")
    assert report["used"] == {"email": 1, "webhook": 0, "sms": 0, "chat": 0, "in_app": 0}
    assert report["quotas"] == [
        {
            "name": "chat",
            "channels": ["chat"],
            "limit": 50000,
            "used": 0,
            "remaining": 50000,
            "resets_at": report["resets_at"],
        },
        {
            "name": "sms",
            "channels": ["sms"],
            "limit": 5000,
            "used": 0,
            "remaining": 5000,
            "resets_at": report["resets_at"],
        },
        {
            "name": "webhook",
            "channels": ["webhook"],
            "limit": 15000,
            "used": 0,
            "remaining": 15000,
            "resets_at": report["resets_at"],
        },
    ]
    rate = report["rate_limit"]
    assert (rate["limit"], rate["window_seconds"], rate["remaining"]) == (200, 60, 199)
