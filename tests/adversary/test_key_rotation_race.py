"""`homing keys rotate` never revives a secret that changed while it ran.

The rotation reads a page of sealed values, re-seals them, and writes them back. A
credential wiped (its provider deleted) or replaced between that read and that write
must stay as it is now. The interleaving is deterministic: the database handed to the
rotation runs the concurrent change just before its first write transaction.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.channels import Channel
from homing.crypto import MasterKey, Sealer, generate_master_key
from homing.managers.keyrotation import KeyRotation
from homing.models import Plan, ProviderAccount, new_id
from homing.services import Services
from homing.store.database import Database
from homing.store.providers import open_credentials, seal_credentials
from homing.store.tables.core import provider_accounts

pytestmark = pytest.mark.sql("a rotation racing a credential change: row locks")

REPLACEMENT = {"api_key": "re_live_replaced_while_rotating"}


class _RacingDatabase:
    """The real database, but ``race`` runs once, before the second transaction (the
    first one after the rotation read its page): a change between read and write."""

    def __init__(self, db: Database, race: Callable[[], Awaitable[None]]) -> None:
        self._db = db
        self._race: Callable[[], Awaitable[None]] | None = race
        self._transactions = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        self._transactions += 1
        if self._transactions == 2 and self._race is not None:
            race, self._race = self._race, None
            await race()
        async with self._db.transaction() as conn:
            yield conn


async def _account(services: Services, tenant_id: str) -> str:
    account_id = new_id()
    sealed = seal_credentials(services.sealer, account_id, {"api_key": "re_live_old_123456"})
    await services.providers.add(
        ProviderAccount(
            id=account_id,
            tenant_id=tenant_id,
            channel=Channel.EMAIL,
            vendor="resend",
            priority=1,
            enabled=True,
            credentials_sealed=sealed,
            credentials_preview="api_key=…",
            config={},
            created_at=datetime.now(UTC),
        )
    )
    return account_id


async def _sealed(services: Services, account_id: str) -> str:
    async with services.db.transaction() as conn:
        query = select(provider_accounts.c.credentials_sealed).where(
            provider_accounts.c.id == account_id
        )
        value: str = (await conn.execute(query)).scalar_one()
    return value


async def test_rotation_does_not_revive_a_credential_wiped_or_replaced_meanwhile(
    services: Services,
) -> None:
    tenant, _ = await services.tenants.create("victim", Plan.STARTUP)
    wiped, replaced, untouched = [await _account(services, tenant.id) for _ in range(3)]
    old_keys = [MasterKey.from_b64(services.settings.secret_key.get_secret_value())]  # type: ignore[union-attr]
    new_key = MasterKey.from_b64(generate_master_key())
    rotating = Sealer(new_key, old_keys)
    replacement = seal_credentials(rotating, replaced, REPLACEMENT)

    async def race() -> None:
        await services.providers.delete(tenant.id, wiped)
        async with services.db.transaction() as conn:
            await conn.execute(
                update(provider_accounts)
                .where(provider_accounts.c.id == replaced)
                .values(credentials_sealed=replacement)
            )

    racing: Any = _RacingDatabase(services.db, race)
    report = await KeyRotation(racing, rotating).run()

    assert await _sealed(services, wiped) == "", "a deleted provider's credential came back"
    assert await _sealed(services, replaced) == replacement, "a newer credential was overwritten"
    untouched_row = await services.providers.get(tenant.id, untouched)
    assert open_credentials(Sealer(new_key), untouched_row)["api_key"].startswith("re_")
    assert report.resealed["provider credentials"] == 1
    assert report.skipped == 2
