"""Signature nonces are accepted once per account until they expire, and expired ones
are purged as new ones arrive."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from homing.services import Services
from homing.store.inbound_nonces import PURGE_BATCH, NonceStore
from homing.store.inbound_schema import inbound_nonces

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


async def _rows(services: Services) -> int:
    async with services.db.transaction() as conn:
        query = select(func.count()).select_from(inbound_nonces)
        return int((await conn.execute(query)).scalar_one())


async def test_a_nonce_is_accepted_once_per_account_until_it_expires(
    services: Services,
) -> None:
    store = NonceStore(services.db)
    until = NOW + timedelta(minutes=6)
    assert await store.claim("acct-a", "token-1", until, NOW)
    assert not await store.claim("acct-a", "token-1", until, NOW + timedelta(minutes=5))
    assert await store.claim("acct-b", "token-1", until, NOW), "another account's own token"
    later = until + timedelta(seconds=1)
    assert await store.claim("acct-a", "token-1", later + timedelta(minutes=6), later)
    assert not await store.claim("acct-a", "token-1", later, later)


async def test_expired_nonces_are_purged_in_bounded_batches(services: Services) -> None:
    store = NonceStore(services.db)
    for i in range(PURGE_BATCH + 5):
        assert await store.claim("acct", f"old-{i}", NOW, NOW - timedelta(minutes=1))
    later = NOW + timedelta(seconds=1)
    assert await store.claim("acct", "new-1", later + timedelta(minutes=6), later)
    assert await _rows(services) == 5 + 1
    assert await store.claim("acct", "new-2", later + timedelta(minutes=6), later)
    assert await _rows(services) == 2
