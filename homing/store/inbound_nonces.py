"""Signature nonces: each one-time value accepted with one body per provider account.

A vendor that signs a token, not the body, retries a refused post with the same token
for hours. So a token is remembered with the hash of the body it came with, for as long
as its signature verifies: the same body again is the vendor's retry (the journal then
answers it as a repeat), another body is a captured token grafted onto a forged event.
The claim runs inside the transaction that journals the body (``InboundStore``), so a
refusal or a crash of Homing's before that commit leaves the token unclaimed and the
vendor's retry is taken. Each claim also deletes a bounded number of expired rows, and
the retention purge deletes the rest, so the table stays the size of the window's
traffic (bounded by each account's event rate).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from sqlalchemy import delete, select, tuple_
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.store.tables.inbound import inbound_nonces

# Expired rows deleted per claim: more than one claim adds, so the table drains.
PURGE_BATCH: Final = 100


@dataclass(frozen=True, slots=True)
class OneTime:
    """A signature's one-time value, the SHA-256 hex of the body it came with, and when
    it may be forgotten (its signature is stale by then)."""

    value: str
    body_hash: str
    expires_at: datetime


class TokenReused(Exception):
    """The one-time value was accepted before with another body."""


def nonce_key(value: str) -> str:
    """The stored form of a nonce: bounded in size whatever the sender put in it."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


async def purge_expired(conn: AsyncConnection, now: datetime, limit: int) -> int:
    """Delete up to ``limit`` nonces expired by ``now``; how many went."""
    c = inbound_nonces.c
    expired = (
        select(c.provider_account_id, c.nonce)
        .where(c.expires_at <= now)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    result = await conn.execute(
        delete(inbound_nonces).where(tuple_(c.provider_account_id, c.nonce).in_(expired))
    )
    return int(result.rowcount)


async def claim(conn: AsyncConnection, account_id: str, once: OneTime, now: datetime) -> None:
    """Remember ``once`` for the account, inside the caller's transaction; TokenReused
    when it is remembered with another body. The same body again is taken (a retry);
    an expired entry is taken over."""
    c = inbound_nonces.c
    key = nonce_key(once.value)
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    statement = (
        insert(inbound_nonces)
        .values(
            provider_account_id=account_id,
            nonce=key,
            expires_at=once.expires_at,
            body_hash=once.body_hash,
        )
        .on_conflict_do_update(
            index_elements=[c.provider_account_id, c.nonce],
            set_={"expires_at": once.expires_at, "body_hash": once.body_hash},
            where=c.expires_at <= now,
        )
        .returning(c.nonce)
    )
    await purge_expired(conn, now, PURGE_BATCH)
    if (await conn.execute(statement)).first() is not None:
        return
    query = select(c.body_hash).where(c.provider_account_id == account_id, c.nonce == key)
    if await conn.scalar(query) != once.body_hash:
        raise TokenReused()
