"""Provider accounts: a tenant's registered providers, credentials sealed at rest.

A tenant holds at most ``HOMING_MAX_PROVIDERS_PER_TENANT`` live accounts over all its
channels (``homing.store.bounds``); a deleted one (kept, marked ``deleted_at``) no
longer counts.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.channels import Channel
from homing.crypto import Sealer
from homing.domain.audit import AuditEvent
from homing.errors import NotFound
from homing.models import ProviderAccount
from homing.store.audit import write_event
from homing.store.bounds import Bound, make_room
from homing.store.database import Database
from homing.store.tables.core import provider_accounts
from homing.store.tables.inbound import provider_inbound

CREDENTIALS_FIELD = "credentials"
PROVIDER_ACCOUNTS_TABLE = "provider_accounts"
_LIVE = provider_accounts.c.deleted_at.is_(None)


def open_credentials(sealer: Sealer, account: ProviderAccount) -> dict[str, Any]:
    """Decrypt an account's credentials (bound to its row id and field)."""
    plaintext = sealer.open(
        account.credentials_sealed,
        table=PROVIDER_ACCOUNTS_TABLE,
        row_id=account.id,
        field=CREDENTIALS_FIELD,
    )
    credentials: dict[str, Any] = orjson.loads(plaintext)
    return credentials


def seal_credentials(sealer: Sealer, account_id: str, credentials: dict[str, Any]) -> str:
    """Encrypt an account's credentials, bound to its row id and field."""
    return sealer.seal(
        orjson.dumps(credentials),
        table=PROVIDER_ACCOUNTS_TABLE,
        row_id=account_id,
        field=CREDENTIALS_FIELD,
    )


def _account(row: Any) -> ProviderAccount:
    return ProviderAccount(
        id=row.id,
        tenant_id=row.tenant_id,
        channel=Channel(row.channel),
        vendor=row.provider,
        priority=row.priority,
        enabled=row.enabled,
        credentials_sealed=row.credentials_sealed,
        credentials_preview=row.credentials_preview,
        config=dict(row.config),
        created_at=row.created_at,
        credentials_rejected_at=row.credentials_rejected_at,
    )


async def accounts_of(
    conn: AsyncConnection, tenant_ids: set[str]
) -> dict[str, list[ProviderAccount]]:
    """Every live account of these tenants, grouped by tenant, in priority order, in
    ``conn``'s transaction (a claim reads them in its own)."""
    query = (
        select(provider_accounts)
        .where(
            provider_accounts.c.tenant_id.in_(sorted(tenant_ids)),
            provider_accounts.c.deleted_at.is_(None),
        )
        .order_by(provider_accounts.c.priority, provider_accounts.c.id)
    )
    rows = (await conn.execute(query)).all()
    grouped: dict[str, list[ProviderAccount]] = {t: [] for t in tenant_ids}
    for row in rows:
        grouped[row.tenant_id].append(_account(row))
    return grouped


class ProviderStore:
    """The SQL of provider accounts, whose credentials stay sealed."""

    def __init__(self, db: Database, *, most: int) -> None:
        """``most``: how many live accounts a tenant may hold."""
        self._db = db
        self._bound = Bound("provider accounts", "max_providers", most)
        self._listeners: list[Callable[[str], None]] = []

    def on_change(self, listener: Callable[[str], None]) -> None:
        """Call ``listener`` with the tenant's id after this store adds, changes or
        deletes one of its accounts (in-process caches of the accounts forget it)."""
        self._listeners.append(listener)

    def _changed(self, tenant_id: str) -> None:
        for listener in self._listeners:
            listener(tenant_id)

    async def add(
        self, account: ProviderAccount, audit: AuditEvent | None = None
    ) -> ProviderAccount:
        """Store a new account; ``audit`` is recorded with it, naming the account.
        QuotaExceeded when the tenant holds as many accounts as it may."""
        async with self._db.transaction() as conn:
            await make_room(conn, self._bound, provider_accounts, account.tenant_id, _LIVE)
            await write_event(conn, audit and audit.about(target_id=account.id))
            await conn.execute(
                provider_accounts.insert().values(
                    id=account.id,
                    tenant_id=account.tenant_id,
                    channel=account.channel.value,
                    provider=account.vendor,
                    priority=account.priority,
                    enabled=account.enabled,
                    credentials_sealed=account.credentials_sealed,
                    credentials_preview=account.credentials_preview,
                    config=account.config,
                    created_at=account.created_at,
                )
            )
        self._changed(account.tenant_id)
        return account

    async def check_room(self, tenant_id: str) -> None:
        """QuotaExceeded when the tenant holds as many accounts as it may: asked before
        a new account's credentials are checked, so a tenant at its bound makes no call
        to a vendor (``add`` counts again, under the tenant's lock)."""
        async with self._db.transaction() as conn:
            await make_room(conn, self._bound, provider_accounts, tenant_id, _LIVE)

    async def all(
        self, tenant_id: str, channel: Channel | None = None, *, enabled_only: bool = False
    ) -> list[ProviderAccount]:
        """The tenant's providers in priority order (ties broken by registration); at
        most ``most``."""
        query = select(provider_accounts).where(
            provider_accounts.c.tenant_id == tenant_id, provider_accounts.c.deleted_at.is_(None)
        )
        if channel is not None:
            query = query.where(provider_accounts.c.channel == channel.value)
        if enabled_only:
            query = query.where(provider_accounts.c.enabled.is_(True))
        query = query.order_by(provider_accounts.c.priority, provider_accounts.c.id)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [_account(row) for row in rows]

    async def get(self, tenant_id: str, account_id: str) -> ProviderAccount:
        query = select(provider_accounts).where(
            provider_accounts.c.id == account_id,
            provider_accounts.c.tenant_id == tenant_id,
            provider_accounts.c.deleted_at.is_(None),
        )
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            raise NotFound("provider not found")
        return _account(row)

    async def update(
        self, tenant_id: str, account_id: str, audit: AuditEvent | None = None, **values: Any
    ) -> ProviderAccount:
        """Change priority, enabled or config of one of the tenant's providers, and
        record ``audit`` with the change."""
        if values:
            async with self._db.transaction() as conn:
                result = await conn.execute(
                    update(provider_accounts)
                    .where(
                        provider_accounts.c.id == account_id,
                        provider_accounts.c.tenant_id == tenant_id,
                        provider_accounts.c.deleted_at.is_(None),
                    )
                    .values(**values)
                )
                if result.rowcount:
                    await write_event(conn, audit)
            self._changed(tenant_id)
            if result.rowcount == 0:
                raise NotFound("provider not found")
        return await self.get(tenant_id, account_id)

    async def mark_credentials_rejected(
        self, tenant_id: str, account_id: str, at: datetime
    ) -> datetime | None:
        """Mark the account's credentials rejected at ``at``; ``at`` when this marked
        it, None when it was marked already (or is gone): the caller tells the tenant
        once per marking."""
        c = provider_accounts.c
        statement = (
            update(provider_accounts)
            .where(
                c.id == account_id,
                c.tenant_id == tenant_id,
                c.deleted_at.is_(None),
                c.credentials_rejected_at.is_(None),
            )
            .values(credentials_rejected_at=at)
        )
        async with self._db.transaction() as conn:
            result = await conn.execute(statement)
        return at if result.rowcount else None

    async def delete(
        self, tenant_id: str, account_id: str, audit: AuditEvent | None = None
    ) -> None:
        """Soft delete: attempts keep pointing at the row, the sealed secret is wiped;
        ``audit`` is recorded when there was one to delete."""
        async with self._db.transaction() as conn:
            result = await conn.execute(
                update(provider_accounts)
                .where(
                    provider_accounts.c.id == account_id,
                    provider_accounts.c.tenant_id == tenant_id,
                    provider_accounts.c.deleted_at.is_(None),
                )
                .values(deleted_at=datetime.now(UTC), enabled=False, credentials_sealed="")
            )
            # Its inbound secret goes too (homing.inbound.secrets).
            await conn.execute(
                delete(provider_inbound).where(
                    provider_inbound.c.provider_account_id == account_id,
                    provider_inbound.c.tenant_id == tenant_id,
                )
            )
            if result.rowcount:
                await write_event(conn, audit)
        self._changed(tenant_id)
        if result.rowcount == 0:
            raise NotFound("provider not found")
