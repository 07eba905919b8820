"""The notices a periodic check finds: 80 % and 100 % of a monthly quota, once a month
per threshold even when checks run at once, and the daily dead-letter digest."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from homing.clock import ManualClock
from homing.managers.notice_checks import NoticeChecks
from homing.models import Plan
from homing.services import Services
from tests.conftest import (
    TenantClient,
    deliver,
    disable_providers,
    make_tenant,
    stored_provider,
)
from tests.e2e.conftest import send
from tests.webhooks.conftest import send_webhook
from tests.webhooks.receiver import Receiver

A_DAY = 86_400.0


def _checks(services: Services) -> NoticeChecks:
    return NoticeChecks(services.notices, services.tenants, services.admission, services.clock)


async def _ops(services: Services, receiver: Receiver) -> list[dict[str, Any]]:
    await deliver(services)
    return [json.loads(r.body) for r in receiver.requests if r.path == "/ops"]


async def _quota_tenant(
    services: Services, api: httpx.AsyncClient, receiver: Receiver
) -> TenantClient:
    tenant = await make_tenant(services, api, "q", Plan.STARTUP, quota_overrides={"webhook": 5})
    response = await tenant.patch("/v1/settings", json={"operations_url": receiver.url + "/ops"})
    assert response.status_code == 200, response.text
    return tenant


@pytest.mark.sql("concurrent rounds claim each notice once")
async def test_quota_notices_at_80_and_100_percent_once_each_under_concurrency(
    services: Services, api: httpx.AsyncClient, receiver: Receiver
) -> None:
    tenant = await _quota_tenant(services, api, receiver)
    for _ in range(3):
        await send_webhook(tenant, receiver.url + "/customer")
    assert sum(await asyncio.gather(*(_checks(services).quotas() for _ in range(3)))) == 0
    await send_webhook(tenant, receiver.url + "/customer")  # 4 of 5: 80 %
    recorded = await asyncio.gather(*(_checks(services).quotas() for _ in range(3)))
    assert sum(recorded) == 1
    await send_webhook(tenant, receiver.url + "/customer")  # 5 of 5
    recorded = await asyncio.gather(*(_checks(services).quotas() for _ in range(3)))
    assert sum(recorded) == 1
    notices = {n["type"]: n["data"] for n in await _ops(services, receiver)}
    assert sorted(notices) == ["quota.exhausted", "quota.warning"]
    warning = notices["quota.warning"]
    assert (warning["quota"], warning["limit"], warning["used"]) == ("webhook", 5, 4)
    assert notices["quota.exhausted"]["used"] == 5
    assert warning["resets_at"].endswith("T00:00:00Z")
    assert sum(await asyncio.gather(*(_checks(services).quotas() for _ in range(2)))) == 0


async def test_the_daily_digest_counts_yesterdays_dead_letters_once(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    receiver: Receiver,
    clock: ManualClock,
) -> None:
    await tenant.patch("/v1/settings", json={"operations_url": receiver.url + "/ops"})
    quiet = await make_tenant(services, api, "quiet")
    await quiet.patch("/v1/settings", json={"operations_url": receiver.url + "/ops"})
    await stored_provider(services, tenant.tenant_id)
    for _ in range(2):
        await send(tenant)
    await disable_providers(services, tenant.tenant_id)
    await deliver(services)  # its provider gone since: dead-lettered at once
    clock.advance(A_DAY)
    assert await _checks(services).digest() == 1
    assert await _checks(services).digest() == 0
    [digest] = await _ops(services, receiver)
    assert digest["type"] == "message.dead_lettered"
    assert digest["data"]["dead_letters"] == 2 and digest["data"]["held_notices"] == 0
