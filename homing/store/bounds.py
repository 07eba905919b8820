"""How many configuration rows a tenant may hold: API keys, sending domains, providers.

Each bound is checked in the transaction that adds the row, after a lock on the
tenant's row (PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` serialises writers already), so
two creates racing for the last place are counted one after the other and the bound
holds exactly, whatever the concurrency. The count is a walk of the tenant's own rows
on a ``tenant_id`` index, so it costs no more than the bound (plus the revoked keys or
deleted providers the tenant kept).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.errors import QuotaExceeded
from homing.store.tables.core import tenants

__all__ = ["Bound", "make_room"]


@dataclass(frozen=True, slots=True)
class Bound:
    """At most ``most`` rows of one kind a tenant; ``noun`` names them in the refusal,
    ``detail`` is the refusal's one detail (``{"max_api_keys": 100}``)."""

    noun: str
    detail: str
    most: int

    def refusal(self) -> QuotaExceeded:
        """The one error of every bound: it names the bound, nothing the tenant holds."""
        return QuotaExceeded(
            f"this tenant holds as many {self.noun} as it may ({self.most})",
            {self.detail: self.most},
        )


async def make_room(
    conn: AsyncConnection, bound: Bound, table: Table, tenant_id: str, *live: Any
) -> None:
    """QuotaExceeded unless the tenant holds fewer than ``bound.most`` rows of
    ``table`` (those matching ``live`` too). Holds the tenant's row until ``conn``'s
    transaction ends, so the insert that follows is counted by the next create."""
    if conn.dialect.name == "postgresql":
        # FOR NO KEY UPDATE: two creates wait for each other, but not the tenant's sends,
        # whose inserts take the FOR KEY SHARE of their foreign key on this row.
        held = select(tenants.c.id).where(tenants.c.id == tenant_id)
        await conn.execute(held.with_for_update(key_share=True))
    count = select(func.count()).select_from(table).where(table.c.tenant_id == tenant_id, *live)
    if (await conn.scalar(count) or 0) >= bound.most:
        raise bound.refusal()
