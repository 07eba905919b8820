"""Signature nonces are accepted with one body per account until they expire (the same
body again is a retry), and expired ones are purged as new ones arrive."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from homing.clock import ManualClock, as_datetime
from homing.services import Services
from homing.store.inbound_nonces import PURGE_BATCH, OneTime, TokenReused, claim
from homing.store.tables.inbound import inbound_nonces

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
BODY, OTHER = "a" * 64, "b" * 64


async def _rows(services: Services) -> int:
    async with services.db.transaction() as conn:
        query = select(func.count()).select_from(inbound_nonces)
        return int((await conn.execute(query)).scalar_one())


async def _claim(
    services: Services, account: str, value: str, body: str, until: datetime, now: datetime
) -> bool:
    try:
        async with services.db.transaction() as conn:
            await claim(conn, account, OneTime(value, body, until), now)
    except TokenReused:
        return False
    return True


async def test_a_nonce_is_accepted_with_one_body_per_account_until_it_expires(
    services: Services,
) -> None:
    until = NOW + timedelta(hours=9)
    assert await _claim(services, "acct-a", "token-1", BODY, until, NOW)
    assert await _claim(services, "acct-a", "token-1", BODY, until, NOW + timedelta(hours=8)), (
        "the vendor's retry of the same body"
    )
    assert not await _claim(services, "acct-a", "token-1", OTHER, until, NOW)
    assert await _claim(services, "acct-b", "token-1", OTHER, until, NOW), "another account's"
    later = until + timedelta(seconds=1)
    assert await _claim(services, "acct-a", "token-1", OTHER, later + timedelta(hours=9), later)
    assert not await _claim(services, "acct-a", "token-1", BODY, later, later)


async def test_a_claim_rolls_back_with_the_transaction_it_was_made_in(
    services: Services,
) -> None:
    until = NOW + timedelta(hours=9)
    with pytest.raises(RuntimeError):
        async with services.db.transaction() as conn:
            await claim(conn, "acct", OneTime("token-1", BODY, until), NOW)
            raise RuntimeError("the journal failed before its commit")
    assert await _rows(services) == 0
    assert await _claim(services, "acct", "token-1", OTHER, until, NOW), "never claimed"


async def test_expired_nonces_are_purged_in_bounded_batches(services: Services) -> None:
    for i in range(PURGE_BATCH + 5):
        assert await _claim(services, "acct", f"old-{i}", BODY, NOW, NOW - timedelta(minutes=1))
    later = NOW + timedelta(seconds=1)
    assert await _claim(services, "acct", "new-1", BODY, later + timedelta(hours=9), later)
    assert await _rows(services) == 5 + 1
    assert await _claim(services, "acct", "new-2", BODY, later + timedelta(hours=9), later)
    assert await _rows(services) == 2


async def test_the_retention_purge_deletes_expired_nonces_and_keeps_live_ones(
    services: Services, clock: ManualClock
) -> None:
    now = as_datetime(clock.now())
    for i in range(3):
        assert await _claim(services, "acct", f"old-{i}", BODY, now, now - timedelta(hours=9))
    live = now + timedelta(hours=1)
    async with services.db.transaction() as conn:  # no claim: nothing purged on the way
        await conn.execute(
            inbound_nonces.insert().values(
                provider_account_id="acct", nonce="f" * 64, expires_at=live, body_hash=BODY
            )
        )
    report = await services.retention().run()
    assert report.nonces == 3
    assert await _rows(services) == 1
