"""The sealed secrets that verify each provider account's inbound events."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from homing.domain.audit import AuditEvent
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.tables.core import provider_accounts
from homing.store.tables.inbound import provider_inbound


@dataclass(kw_only=True, frozen=True, slots=True)
class StoredSecret:
    """An inbound verification secret as stored: sealed, with its masked preview."""

    provider_account_id: str
    tenant_id: str
    provider: str
    kind: str
    secret_sealed: str
    preview: str
    updated_at: datetime


def _stored(row: Any) -> StoredSecret:
    return StoredSecret(
        provider_account_id=row.provider_account_id,
        tenant_id=row.tenant_id,
        provider=row.provider,
        kind=row.kind,
        secret_sealed=row.secret_sealed,
        preview=row.preview,
        updated_at=row.updated_at,
    )


def _joined() -> Any:
    a, s = provider_accounts.c, provider_inbound.c
    return (
        select(provider_inbound, a.provider)
        .join(provider_accounts, a.id == s.provider_account_id)
        .where(a.deleted_at.is_(None))
    )


class InboundSecretStore:
    """The SQL of inbound verification secrets."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def put(self, secret: StoredSecret, audit: AuditEvent | None = None) -> None:
        """Store or replace the account's secret, and record ``audit``."""
        values = {
            "provider_account_id": secret.provider_account_id,
            "tenant_id": secret.tenant_id,
            "kind": secret.kind,
            "secret_sealed": secret.secret_sealed,
            "preview": secret.preview,
            "updated_at": secret.updated_at,
        }
        async with self._db.transaction() as conn:
            insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            statement = insert(provider_inbound).values(**values)
            changed = {k: v for k, v in values.items() if k != "provider_account_id"}
            await conn.execute(
                statement.on_conflict_do_update(
                    index_elements=["provider_account_id"], set_=changed
                )
            )
            await write_event(conn, audit)

    async def get(self, tenant_id: str, account_id: str) -> StoredSecret | None:
        s = provider_inbound.c
        query = _joined().where(s.provider_account_id == account_id, s.tenant_id == tenant_id)
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
        return _stored(row) if row else None

    async def delete(
        self, tenant_id: str, account_id: str, audit: AuditEvent | None = None
    ) -> bool:
        """Remove the account's secret (recording ``audit``); False when it had none."""
        s = provider_inbound.c
        async with self._db.transaction() as conn:
            result = await conn.execute(
                delete(provider_inbound).where(
                    s.provider_account_id == account_id, s.tenant_id == tenant_id
                )
            )
            if result.rowcount:
                await write_event(conn, audit)
        return bool(result.rowcount)

    async def for_inbound(self, provider: str, account_id: str) -> StoredSecret | None:
        """The secret of a live account of this provider, whoever its tenant is."""
        query = _joined().where(
            provider_inbound.c.provider_account_id == account_id,
            provider_accounts.c.provider == provider,
        )
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
        return _stored(row) if row else None
