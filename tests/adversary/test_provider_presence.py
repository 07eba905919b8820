"""The refusal at accept of what no provider could deliver, against a hostile tenant:
its refused sends cost it a read each but never another tenant's cached answer, and a
burst of sends past an expiry makes one read, not one each."""

from __future__ import annotations

import asyncio

import pytest

from homing.channels import Channel
from homing.errors import NoProvider, NoSender
from homing.managers.provider_presence import ProviderPresence
from homing.models import ProviderAccount
from homing.services import Services
from homing.store.providers import ProviderStore
from tests.conftest import stored_provider, stored_tenant


class CountingStore(ProviderStore):
    """The provider store, counting the reads of each tenant's accounts."""

    def __init__(self, services: Services) -> None:
        super().__init__(services.db, most=services.settings.limits.providers)
        self.reads: dict[str, int] = {}

    async def all(
        self, tenant_id: str, channel: Channel | None = None, *, enabled_only: bool = False
    ) -> list[ProviderAccount]:
        self.reads[tenant_id] = self.reads.get(tenant_id, 0) + 1
        return await super().all(tenant_id, channel, enabled_only=enabled_only)


async def test_a_tenants_refused_sends_never_touch_another_tenants_cached_answer(
    services: Services,
) -> None:
    store = CountingStore(services)
    presence = ProviderPresence(store, seconds=60, now=lambda: 0.0)
    honest, hostile = await stored_tenant(services, "honest"), await stored_tenant(services, "x")
    await stored_provider(services, honest)
    await stored_provider(services, hostile, Channel.SMS, "vonage")  # no sender of its own
    await presence.check(honest, Channel.EMAIL)
    for _ in range(50):
        with pytest.raises(NoProvider):
            await presence.check(hostile, Channel.EMAIL)
        with pytest.raises(NoSender):
            await presence.check(hostile, Channel.SMS, needs_sender=True)
    for _ in range(50):
        await presence.check(honest, Channel.EMAIL)
    assert store.reads == {honest: 1, hostile: 100}


async def test_a_burst_past_an_expiry_makes_one_read(services: Services) -> None:
    store = CountingStore(services)
    presence = ProviderPresence(store, seconds=5, now=lambda: 0.0)
    tenant = await stored_tenant(services)
    await stored_provider(services, tenant)
    await asyncio.gather(*(presence.check(tenant, Channel.EMAIL) for _ in range(64)))
    assert store.reads == {tenant: 1}


async def test_a_change_in_this_process_is_seen_by_the_next_send(services: Services) -> None:
    presence = ProviderPresence(services.providers, seconds=60, now=lambda: 0.0)
    tenant = await stored_tenant(services)
    account = await stored_provider(services, tenant)
    await presence.check(tenant, Channel.EMAIL)
    await services.providers.delete(tenant, account.id)
    with pytest.raises(NoProvider):
        await presence.check(tenant, Channel.EMAIL)
