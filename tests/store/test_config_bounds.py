"""The bounds on a tenant's API keys, sending domains and provider accounts, in the
store on SQLite and PostgreSQL: the create past the bound is refused in its own
transaction (nothing written), only live rows count, another tenant's rows never do,
and creates racing for the last place leave the tenant at its bound, not past it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from homing.domain.domain_rows import SendingDomain
from homing.errors import QuotaExceeded
from homing.models import DomainStatus, new_id
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import api_keys, provider_accounts
from homing.store.tables.inbound import sending_domains
from tests.conftest import stored_provider, stored_tenant
from tests.fixtures import settings_for

MOST = 3


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        max_api_keys_per_tenant=MOST,
        max_domains_per_tenant=MOST,
        max_providers_per_tenant=MOST,
    )


async def _rows(services: Services, table: Any, tenant_id: str) -> int:
    query = select(func.count()).select_from(table).where(table.c.tenant_id == tenant_id)
    async with services.db.transaction() as conn:
        return int(await conn.scalar(query) or 0)


def _domain(tenant_id: str, account_id: str, name: str) -> SendingDomain:
    now = datetime.now(UTC)
    return SendingDomain(
        id=new_id(),
        tenant_id=tenant_id,
        provider_account_id=account_id,
        provider="resend",
        domain=name,
        provider_domain_id=name,
        status=DomainStatus.PENDING,
        records=(),
        created_at=now,
        updated_at=now,
    )


async def _refused(create: Awaitable[Any], detail: str) -> None:
    with pytest.raises(QuotaExceeded) as refused:
        await create
    assert refused.value.details == {detail: MOST}
    assert str(MOST) in refused.value.message


async def test_keys_past_the_bound_are_refused_and_revoked_ones_do_not_count(
    services: Services,
) -> None:
    tenant = await stored_tenant(services)  # created with one key
    for n in range(MOST - 1):
        await services.keys.issue(tenant, f"k{n}")
    await _refused(services.keys.issue(tenant, "one-more"), "max_api_keys")
    await _refused(services.keys.issue(tenant, "test", test=True), "max_api_keys")
    assert await _rows(services, api_keys, tenant) == MOST
    other = await stored_tenant(services, "other")
    await services.keys.issue(other, "theirs")  # another tenant's bound is its own
    oldest = (await services.keys.live(tenant))[0]
    await services.keys.revoke(tenant, oldest.id)
    await services.keys.issue(tenant, "in-its-place")
    assert len(await services.keys.live(tenant)) == MOST
    assert await _rows(services, api_keys, tenant) == MOST + 1  # the revoked one is kept


async def test_providers_past_the_bound_are_refused_and_deleted_ones_do_not_count(
    services: Services,
) -> None:
    tenant = await stored_tenant(services)
    accounts = [await stored_provider(services, tenant) for _ in range(MOST)]
    await _refused(stored_provider(services, tenant), "max_providers")
    await _refused(services.providers.check_room(tenant), "max_providers")
    assert await _rows(services, provider_accounts, tenant) == MOST
    await stored_provider(services, await stored_tenant(services, "other"))
    await services.providers.delete(tenant, accounts[0].id)
    await services.providers.check_room(tenant)
    await stored_provider(services, tenant)
    assert len(await services.providers.all(tenant)) == MOST


async def test_domains_past_the_bound_are_refused_and_deleting_one_makes_room(
    services: Services,
) -> None:
    tenant = await stored_tenant(services)
    account = await stored_provider(services, tenant)
    store = services.domains._store
    added = [await store.add(_domain(tenant, account.id, f"d{n}.example")) for n in range(MOST)]
    await _refused(store.add(_domain(tenant, account.id, "more.example")), "max_domains")
    await _refused(store.check_room(tenant), "max_domains")
    assert await _rows(services, sending_domains, tenant) == MOST
    other = await stored_tenant(services, "other")
    theirs = await stored_provider(services, other)
    await store.add(_domain(other, theirs.id, "d0.example"))
    await store.delete(tenant, added[0].id)
    await store.add(_domain(tenant, account.id, "more.example"))
    assert len(await store.all(tenant)) == MOST


async def _race(create: Callable[[], Awaitable[Any]]) -> int:
    """Four creates at once for the one place left; how many were stored."""
    outcomes = await asyncio.gather(*(create() for _ in range(4)), return_exceptions=True)
    refused = [o for o in outcomes if isinstance(o, BaseException)]
    assert all(isinstance(o, QuotaExceeded) for o in refused), refused
    return len(outcomes) - len(refused)


async def test_creates_racing_for_the_last_place_never_pass_the_bound(
    services: Services,
) -> None:
    tenant = await stored_tenant(services)
    for n in range(MOST - 2):
        await services.keys.issue(tenant, f"k{n}")
    assert await _race(lambda: services.keys.issue(tenant, "racer")) == 1
    assert len(await services.keys.live(tenant)) == MOST

    for _ in range(MOST - 1):
        await stored_provider(services, tenant)
    assert await _race(lambda: stored_provider(services, tenant)) == 1
    assert len(await services.providers.all(tenant)) == MOST

    store = services.domains._store
    account = (await services.providers.all(tenant))[0]
    for n in range(MOST - 1):
        await store.add(_domain(tenant, account.id, f"d{n}.example"))
    names = iter(f"racer{n}.example" for n in range(4))
    assert await _race(lambda: store.add(_domain(tenant, account.id, next(names)))) == 1
    assert len(await store.all(tenant)) == MOST
