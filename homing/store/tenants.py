"""Tenants and their platform API keys."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, update

from homing.crypto import api_key_display_prefix, generate_api_key, hash_api_key
from homing.models import Plan, Tenant, new_id
from homing.store.database import Database
from homing.store.schema import api_keys, tenants

_LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request is: the tenant and the key it used."""

    tenant: Tenant
    api_key_id: str
    test_key: bool


def _tenant(row: Any) -> Tenant:
    return Tenant(
        id=row.id,
        name=row.name,
        plan=Plan(row.plan),
        suspended=row.suspended,
        created_at=row.created_at,
    )


class TenantStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(self, name: str, plan: Plan = Plan.FREE) -> tuple[Tenant, str]:
        """Create a tenant with its first API key; the key is returned once, in clear."""
        now = datetime.now(UTC)
        tenant = Tenant(id=new_id(), name=name, plan=plan, suspended=False, created_at=now)
        key = generate_api_key()
        async with self._db.transaction() as conn:
            await conn.execute(
                tenants.insert().values(
                    id=tenant.id, name=name, plan=plan.value, suspended=False, created_at=now
                )
            )
            await conn.execute(api_keys.insert().values(**_key_row(tenant.id, key, "default", now)))
        return tenant, key

    async def get(self, tenant_id: str) -> Tenant | None:
        async with self._db.transaction() as conn:
            row = (await conn.execute(select(tenants).where(tenants.c.id == tenant_id))).first()
        return _tenant(row) if row else None

    async def authenticate(self, key: str) -> Principal | None:
        """The tenant behind an API key, or None for an unknown or revoked key.

        The lookup is by SHA-256 of the key, a unique index, so the stored hash is
        never compared byte by byte against attacker input.
        """
        digest = hash_api_key(key)
        query = (
            select(
                api_keys.c.id.label("key_id"),
                api_keys.c.test.label("key_test"),
                api_keys.c.last_used_at,
                tenants,
            )
            .join(tenants, tenants.c.id == api_keys.c.tenant_id)
            .where(api_keys.c.key_hash == digest, api_keys.c.revoked_at.is_(None))
        )
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
            if row is None:
                return None
            now = datetime.now(UTC)
            if row.last_used_at is None or now - row.last_used_at > _LAST_USED_RESOLUTION:
                await conn.execute(
                    update(api_keys).where(api_keys.c.id == row.key_id).values(last_used_at=now)
                )
        return Principal(tenant=_tenant(row), api_key_id=row.key_id, test_key=row.key_test)


def _key_row(tenant_id: str, key: str, name: str, now: datetime) -> dict[str, Any]:
    return {
        "id": new_id(),
        "tenant_id": tenant_id,
        "key_hash": hash_api_key(key),
        "prefix": api_key_display_prefix(key),
        "name": name,
        "test": False,
        "created_at": now,
    }
