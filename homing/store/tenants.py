"""Tenants and their platform API keys."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, update

from homing.crypto import api_key_display_prefix, generate_api_key, hash_api_key
from homing.domain.audit import AuditEvent
from homing.domain.tenants import Principal
from homing.errors import NotFound
from homing.models import JobStatus, Plan, Tenant, new_id
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.tables.core import api_keys, jobs, queue_entries, tenants

_LAST_USED_RESOLUTION = timedelta(minutes=1)


# The error class a job shows while it is held because its tenant is suspended.
HELD_ERROR_CLASS = "tenant_suspended"

_CHANGEABLE = frozenset({"name", "plan", "rate_limit_per_minute", "quota_overrides", "suspended"})


@dataclass(frozen=True, slots=True)
class TenantPage:
    """One page of tenants and the cursor of the next."""

    tenants: list[Tenant]
    next_cursor: str | None


def _tenant(row: Any) -> Tenant:
    return Tenant(
        id=row.id,
        name=row.name,
        plan=Plan(row.plan),
        suspended=row.suspended,
        created_at=row.created_at,
        rate_limit_per_minute=row.rate_limit_per_minute,
        quota_overrides=dict(row.quota_overrides) if row.quota_overrides is not None else None,
    )


class TenantStore:
    """The SQL of tenants: create, read, page, update, find the suspended among some,
    release held jobs, and authenticate an API key hash."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(
        self,
        name: str,
        plan: Plan = Plan.FREE,
        *,
        rate_limit_per_minute: int | None = None,
        quota_overrides: dict[str, int | None] | None = None,
        audit: AuditEvent | None = None,
    ) -> tuple[Tenant, str]:
        """Create a tenant with its first API key; the key is returned once, in clear.
        ``audit`` is recorded with it, naming the new tenant."""
        now = datetime.now(UTC)
        tenant = Tenant(
            id=new_id(),
            name=name,
            plan=plan,
            suspended=False,
            created_at=now,
            rate_limit_per_minute=rate_limit_per_minute,
            quota_overrides=quota_overrides,
        )
        key = generate_api_key()
        async with self._db.transaction() as conn:
            await conn.execute(
                tenants.insert().values(
                    id=tenant.id,
                    name=name,
                    plan=plan.value,
                    suspended=False,
                    created_at=now,
                    rate_limit_per_minute=rate_limit_per_minute,
                    quota_overrides=quota_overrides,
                )
            )
            await conn.execute(api_keys.insert().values(**key_row(tenant.id, key, "default", now)))
            await write_event(conn, audit and audit.about(target_id=tenant.id, tenant_id=tenant.id))
        return tenant, key

    async def get(self, tenant_id: str) -> Tenant | None:
        async with self._db.transaction() as conn:
            row = (await conn.execute(select(tenants).where(tenants.c.id == tenant_id))).first()
        return _tenant(row) if row else None

    async def page(self, *, limit: int = 50, cursor: str | None = None) -> TenantPage:
        """Tenants, oldest first; ``cursor`` is the id of the last tenant of a page."""
        query = select(tenants).order_by(tenants.c.id).limit(limit + 1)
        if cursor is not None:
            query = query.where(tenants.c.id > cursor)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        page = [_tenant(row) for row in rows[:limit]]
        return TenantPage(page, page[-1].id if len(rows) > limit else None)

    async def update(
        self, tenant_id: str, audit: AuditEvent | None = None, **changes: Any
    ) -> Tenant:
        """Change a tenant's name, plan, custom limits or suspension; NotFound if none.
        ``audit`` is recorded with the change."""
        unknown = set(changes) - _CHANGEABLE
        if unknown:
            raise ValueError(f"tenants have no changeable field {sorted(unknown)}")
        values = {k: v.value if isinstance(v, Plan) else v for k, v in changes.items()}
        if values:
            async with self._db.transaction() as conn:
                result = await conn.execute(
                    update(tenants).where(tenants.c.id == tenant_id).values(**values)
                )
                if result.rowcount:
                    await write_event(conn, audit)
            if result.rowcount == 0:
                raise NotFound("tenant not found")
        tenant = await self.get(tenant_id)
        if tenant is None:
            raise NotFound("tenant not found")
        return tenant

    async def release_held(self, tenant_id: str, epoch: float) -> int:
        """Make the jobs held while the tenant was suspended claimable at ``epoch``."""
        held = select(jobs.c.id).where(
            jobs.c.tenant_id == tenant_id,
            jobs.c.status == JobStatus.PENDING.value,
            jobs.c.error_class == HELD_ERROR_CLASS,
        )
        async with self._db.transaction() as conn:
            result = await conn.execute(
                update(queue_entries)
                .where(queue_entries.c.job_id.in_(held), queue_entries.c.claim_token.is_(None))
                .values(available_at=epoch)
            )
        return int(result.rowcount)

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


def key_row(
    tenant_id: str, key: str, name: str, now: datetime, *, test: bool = False
) -> dict[str, Any]:
    """The ``api_keys`` row of a new key: its hash and display prefix, never the key."""
    return {
        "id": new_id(),
        "tenant_id": tenant_id,
        "key_hash": hash_api_key(key),
        "prefix": api_key_display_prefix(key),
        "name": name,
        "test": test,
        "created_at": now,
    }


def tenant_of(row: Any) -> Tenant:
    """A tenant from a row holding the ``tenants`` columns (the console's joins too)."""
    return _tenant(row)
