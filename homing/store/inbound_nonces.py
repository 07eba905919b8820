"""Signature nonces: each one-time value accepted once per provider account.

A value is remembered until its signature would be stale anyway; each claim also
deletes a bounded number of expired rows, so the table stays the size of the
tolerance window's traffic without a sweeper.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Final

from sqlalchemy import delete, select, tuple_
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from homing.store.database import Database
from homing.store.inbound_schema import inbound_nonces

# Expired rows deleted per claim: more than one claim adds, so the table drains.
PURGE_BATCH: Final = 100


def nonce_key(value: str) -> str:
    """The stored form of a nonce: bounded in size whatever the sender put in it."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


class NonceStore:
    """One-time values of inbound signatures (Mailgun's token), claimed once until they
    expire."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def claim(self, account_id: str, value: str, expires_at: datetime, now: datetime) -> bool:
        """Remember ``value`` for the account until ``expires_at``; False when it is
        remembered already (a replay). An expired entry is taken over, not refused."""
        c = inbound_nonces.c
        insert = pg_insert if self._db.dialect == "postgresql" else sqlite_insert
        statement = (
            insert(inbound_nonces)
            .values(provider_account_id=account_id, nonce=nonce_key(value), expires_at=expires_at)
            .on_conflict_do_update(
                index_elements=[c.provider_account_id, c.nonce],
                set_={"expires_at": expires_at},
                where=c.expires_at <= now,
            )
            .returning(c.nonce)
        )
        expired = (
            select(c.provider_account_id, c.nonce)
            .where(c.expires_at <= now)
            .limit(PURGE_BATCH)
            .with_for_update(skip_locked=True)
        )
        async with self._db.transaction() as conn:
            await conn.execute(
                delete(inbound_nonces).where(tuple_(c.provider_account_id, c.nonce).in_(expired))
            )
            return (await conn.execute(statement)).first() is not None
