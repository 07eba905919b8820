"""A tenant's settings: one row per tenant that changed one, a column per setting.

A tenant without a row has every default. A new setting is a column in
``schema.tenant_settings`` and a field of ``TenantSettings`` with its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from sqlalchemy import Label, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.domain.audit import AuditEvent
from homing.domain.tenant_settings import TenantSettings
from homing.models import SignatureFormat
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.tables.core import tenant_settings

__all__ = [
    "SETTING_NAMES",
    "TenantSettingsStore",
    "read_settings",
    "settings_columns",
    "settings_of",
]


# The names a caller may change: every field but the bookkeeping.
SETTING_NAMES = frozenset(f.name for f in fields(TenantSettings)) - {"updated_at"}


def settings_columns(tenant_id: str) -> list[Label[Any]]:
    """One scalar subquery per stored setting of the tenant (NULL without a row), so
    another store can read the settings inside a statement of its own."""
    return [
        select(column)
        .where(tenant_settings.c.tenant_id == tenant_id)
        .scalar_subquery()
        .label(column.name)
        for column in tenant_settings.c
        if column.name != "tenant_id"
    ]


def settings_of(row: Any) -> TenantSettings:
    """The settings from a row selected with ``settings_columns``; defaults for NULL."""
    if row.updated_at is None:
        return TenantSettings()
    return TenantSettings(
        webhook_signature_format=SignatureFormat(row.webhook_signature_format),
        contact_email=row.contact_email,
        operations_url=row.operations_url,
        default_ttl_seconds=dict(row.default_ttl_seconds or {}),
        unsubscribe_mailbox=row.unsubscribe_mailbox,
        quiet_hours=row.quiet_hours,
        updated_at=row.updated_at,
    )


async def read_settings(conn: AsyncConnection, tenant_id: str) -> TenantSettings:
    """The tenant's settings, inside a transaction the caller holds."""
    row = (await conn.execute(select(*settings_columns(tenant_id)))).one()
    return settings_of(row)


class TenantSettingsStore:
    """The SQL of the tenant settings resource."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def get(self, tenant_id: str) -> TenantSettings:
        async with self._db.transaction() as conn:
            return await read_settings(conn, tenant_id)

    async def update(
        self, tenant_id: str, changes: Mapping[str, object], audit: AuditEvent | None = None
    ) -> TenantSettings:
        """Set these settings (names from ``SETTING_NAMES``), keep the others, record
        ``audit``; the settings afterwards. Two concurrent updates of different settings
        both hold."""
        unknown = set(changes) - SETTING_NAMES
        if unknown:
            raise ValueError(f"not tenant settings: {sorted(unknown)}")
        if not changes:
            return await self.get(tenant_id)
        values = {**changes, "updated_at": as_datetime(self._clock.now())}
        dialect = sqlite if self._db.is_sqlite else postgresql
        statement = (
            dialect.insert(tenant_settings)
            .values(tenant_id=tenant_id, **values)
            .on_conflict_do_update(index_elements=["tenant_id"], set_=values)
        )
        async with self._db.transaction() as conn:
            await conn.execute(statement)
            await write_event(conn, audit)
            return await read_settings(conn, tenant_id)
