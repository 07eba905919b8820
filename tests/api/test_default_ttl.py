"""The tenant's default ttl at accept: applied per channel, and looked up once for a
burst of accepts (cached like API keys, under a second)."""

from __future__ import annotations

import asyncio

from homing.channels import Channel
from homing.domain.accepting import NewJob
from homing.domain.tenant_settings import TenantSettings
from homing.managers.admission import Admission
from homing.managers.plans import load_plans
from homing.models import DeliveryMode, Priority, Queue
from homing.services import Services
from homing.store.tenant_settings import TenantSettingsStore
from tests.conftest import TenantClient


class CountingSettings(TenantSettingsStore):
    calls = 0

    async def get(self, tenant_id: str) -> TenantSettings:
        self.calls += 1
        return await super().get(tenant_id)


def _email(tenant_id: str, n: int, ttl: int | None = None) -> NewJob:
    payload = {"to": "ada@example.com", "from": "a@acme.example", "subject": f"s{n}", "text": "t"}
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload=payload,
        delivery=DeliveryMode.AT_LEAST_ONCE,
        ttl_seconds=ttl,
    )


async def test_a_burst_of_accepts_reads_the_default_ttl_once(
    services: Services, tenant: TenantClient
) -> None:
    changed = await tenant.patch("/v1/settings", json={"default_ttl_seconds": {"email": 90}})
    assert changed.status_code == 200, changed.text
    counting = CountingSettings(services.db, services.clock)
    admission = Admission(
        services.tenants,
        services.limiter,
        load_plans(),
        services.jobs,
        services.batches,
        auth_cache_seconds=0.5,
        tenant_settings=counting,
    )
    principal = await services.tenants.authenticate(tenant.key)
    assert principal is not None
    burst = [admission.accept(principal, _email(tenant.tenant_id, n)) for n in range(20)]
    accepted = await asyncio.gather(*burst)
    assert counting.calls == 1
    for one in accepted:
        assert one.job.expires_at is not None
        assert (one.job.expires_at - one.job.created_at).total_seconds() == 90
    named = await admission.accept(principal, _email(tenant.tenant_id, 99, ttl=5))
    assert named.job.expires_at is not None
    assert (named.job.expires_at - named.job.created_at).total_seconds() == 5
