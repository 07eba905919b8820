"""A tenant's platform API keys: issue (shown once), list, revoke.

Only the SHA-256 of a key and its first characters (to recognise it by) are stored.
A tenant holds at most ``HOMING_MAX_API_KEYS_PER_TENANT`` live keys (``homing.store.bounds``):
a revoked key no longer counts, since it opens nothing and is listed nowhere, and
revoking needs another live key, so issuing and revoking never hold more at once.
Authentication is ``TenantStore.authenticate``; revocation reaches the other API
processes through the short TTL of their authentication caches.
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from sqlalchemy import select, update

from homing.crypto import generate_api_key
from homing.domain.audit import AuditEvent
from homing.domain.keys import ApiKey
from homing.errors import Conflict, NotFound
from homing.store.audit import write_event
from homing.store.bounds import Bound, make_room
from homing.store.database import Database
from homing.store.tables.core import api_keys
from homing.store.tenants import key_row


def _key(row: Any) -> ApiKey:
    return ApiKey(
        id=row.id,
        tenant_id=row.tenant_id,
        name=row.name,
        prefix=row.prefix,
        test=row.test,
        created_at=row.created_at,
        last_used_at=row.last_used_at,
    )


class ApiKeyStore:
    """The SQL of API keys, stored as hashes only."""

    def __init__(self, db: Database, *, most: int) -> None:
        """``most``: how many live keys a tenant may hold."""
        self._db = db
        self._bound = Bound("API keys", "max_api_keys", most)

    async def issue(
        self, tenant_id: str, name: str, *, test: bool = False, audit: AuditEvent | None = None
    ) -> tuple[ApiKey, str]:
        """A new key for the tenant; the key itself is returned here and never again.
        ``audit`` is recorded with it, naming the new key. QuotaExceeded when the tenant
        holds as many live keys as it may."""
        key = generate_api_key(test=test)
        row = key_row(tenant_id, key, name, datetime.now(UTC), test=test)
        async with self._db.transaction() as conn:
            await make_room(conn, self._bound, api_keys, tenant_id, api_keys.c.revoked_at.is_(None))
            await conn.execute(api_keys.insert().values(**row))
            await write_event(conn, audit and audit.about(target_id=row["id"]))
        return _key(SimpleNamespace(**row, last_used_at=None)), key

    async def live(self, tenant_id: str) -> list[ApiKey]:
        """The tenant's keys that are not revoked, oldest first (at most ``most``)."""
        query = (
            select(api_keys)
            .where(api_keys.c.tenant_id == tenant_id, api_keys.c.revoked_at.is_(None))
            .order_by(api_keys.c.created_at, api_keys.c.id)
        )
        async with self._db.transaction() as conn:
            return [_key(row) for row in (await conn.execute(query)).all()]

    async def revoke(self, tenant_id: str, key_id: str, audit: AuditEvent | None = None) -> None:
        """Revoke one of the tenant's keys. The last live key cannot be revoked (Conflict):
        a tenant would have no way back in."""
        c = api_keys.c
        async with self._db.transaction() as conn:
            live = (
                await conn.execute(
                    select(c.id)
                    .where(c.tenant_id == tenant_id, c.revoked_at.is_(None))
                    .with_for_update()
                )
            ).all()
            if key_id not in {row.id for row in live}:
                raise NotFound("API key not found")
            if len(live) == 1:
                raise Conflict("this is the tenant's last API key; issue another one first")
            await conn.execute(
                update(api_keys)
                .where(c.id == key_id, c.tenant_id == tenant_id)
                .values(revoked_at=datetime.now(UTC))
            )
            await write_event(conn, audit)
