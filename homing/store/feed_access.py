"""The SQL of who may read a tenant's feeds: its feed secret (sealed, one per tenant)
and the browser origins it allows (docs/feed.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from homing.domain.audit import AuditEvent
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.tables.feed import feed_origins, feed_secrets

__all__ = ["FEED_SECRETS_TABLE", "FEED_SECRET_FIELD", "FeedAccessStore", "FeedSecretRow"]

# What a feed secret is sealed under, with the tenant id as the row.
FEED_SECRETS_TABLE = "feed_secrets"
FEED_SECRET_FIELD = "secret"


@dataclass(frozen=True, slots=True)
class FeedSecretRow:
    """A tenant's feed secret as stored: sealed, with its masked preview."""

    tenant_id: str
    sealed: str = field(repr=False)
    preview: str
    created_at: datetime


class FeedAccessStore:
    """Feed secrets and allowed origins, by tenant."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def secret(self, tenant_id: str) -> FeedSecretRow | None:
        s = feed_secrets.c
        async with self._db.transaction() as conn:
            row = (await conn.execute(select(feed_secrets).where(s.tenant_id == tenant_id))).first()
        if row is None:
            return None
        return FeedSecretRow(row.tenant_id, row.secret_sealed, row.preview, row.created_at)

    async def put_secret(
        self, secret: FeedSecretRow, *, replace: bool, audit: AuditEvent | None = None
    ) -> FeedSecretRow:
        """Store the tenant's secret: replace the one it has (``replace``), or keep that
        one when a concurrent first use stored it already. The secret now stored."""
        values = {
            "tenant_id": secret.tenant_id,
            "secret_sealed": secret.sealed,
            "preview": secret.preview,
            "created_at": secret.created_at,
        }
        async with self._db.transaction() as conn:
            insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            statement = insert(feed_secrets).values(**values)
            if replace:
                changed = {k: v for k, v in values.items() if k != "tenant_id"}
                statement = statement.on_conflict_do_update(
                    index_elements=["tenant_id"], set_=changed
                )
            else:
                statement = statement.on_conflict_do_nothing(index_elements=["tenant_id"])
            await conn.execute(statement)
            await write_event(conn, audit)
        stored = await self.secret(secret.tenant_id)
        assert stored is not None  # stored just now, and never deleted but with the tenant
        return stored

    async def origins(self, tenant_id: str) -> list[str]:
        o = feed_origins.c
        query = select(o.origin).where(o.tenant_id == tenant_id).order_by(o.origin)
        async with self._db.transaction() as conn:
            return [r.origin for r in (await conn.execute(query)).all()]

    async def set_origins(
        self, tenant_id: str, origins: Sequence[str], audit: AuditEvent | None = None
    ) -> None:
        """Replace the tenant's allowed origins (and record ``audit``)."""
        o = feed_origins.c
        async with self._db.transaction() as conn:
            await conn.execute(delete(feed_origins).where(o.tenant_id == tenant_id))
            if origins:
                rows = [{"tenant_id": tenant_id, "origin": origin} for origin in origins]
                await conn.execute(feed_origins.insert(), rows)
            await write_event(conn, audit)

    async def allowed_by_any(self, origin: str) -> bool:
        """Whether some tenant allows ``origin`` (a preflight names no tenant)."""
        o = feed_origins.c
        query = select(o.tenant_id).where(o.origin == origin).limit(1)
        async with self._db.transaction() as conn:
            return (await conn.execute(query)).first() is not None

    async def allowed(self, tenant_id: str, origin: str) -> bool:
        o = feed_origins.c
        query = select(o.tenant_id).where(o.origin == origin, o.tenant_id == tenant_id)
        async with self._db.transaction() as conn:
            return (await conn.execute(query)).first() is not None
