"""Categories: a tenant's kinds of notification, by key, and their defaults by channel.

A category's ``defaults`` hold a value for every channel a preference is kept for (the
manager fills the ones a tenant leaves out), so whoever reads them needs no rule.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from homing.clock import Clock, as_datetime
from homing.domain.audit import AuditEvent
from homing.domain.categories import Category
from homing.errors import NotFound, QuotaExceeded
from homing.models import AuditAction
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.sql import one_of
from homing.store.tables.recipients import categories

__all__ = ["CATEGORY_FIELDS", "CategoryPage", "CategoryStore"]

CATEGORY_FIELDS = frozenset({"name", "kind", "defaults", "frequency_cap", "quiet_hours"})


@dataclass(frozen=True, slots=True)
class CategoryPage:
    """One page of a tenant's categories by key, and the cursor of the next."""

    entries: list[Category]
    next_cursor: str | None


def _category(row: Any) -> Category:
    return Category(
        tenant_id=row.tenant_id,
        key=row.key,
        name=row.name,
        kind=row.kind,
        defaults=dict(row.defaults),
        frequency_cap=row.frequency_cap,
        quiet_hours=row.quiet_hours,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


class CategoryStore:
    """The SQL of categories."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def put(
        self,
        tenant_id: str,
        key: str,
        values: Mapping[str, Any],
        max_count: int,
        audit: AuditEvent | None = None,
    ) -> tuple[Category, bool]:
        """Create or replace the category (every field of ``CATEGORY_FIELDS``); True when
        it is new. QuotaExceeded when the tenant has ``max_count`` categories already.
        ``audit`` (a replacement's) is written in the transaction, as a creation when
        it is one."""
        if set(values) != CATEGORY_FIELDS:
            raise ValueError("a category is stored whole")
        try:
            return await self._put(tenant_id, key, values, max_count, audit)
        except IntegrityError:  # created by a concurrent request since we looked
            return await self._put(tenant_id, key, values, max_count, audit)

    async def _put(
        self,
        tenant_id: str,
        key: str,
        values: Mapping[str, Any],
        max_count: int,
        audit: AuditEvent | None,
    ) -> tuple[Category, bool]:
        now = as_datetime(self._clock.now())
        c = categories.c
        where = (c.tenant_id == tenant_id, c.key == key)
        async with self._db.transaction() as conn:
            changed = await conn.execute(
                update(categories).where(*where).values(**values, updated_at=now)
            )
            created = changed.rowcount == 0
            if created:
                # At most max_count rows a tenant: counting them is a short index walk.
                count = select(func.count()).select_from(categories)
                held = (await conn.execute(count.where(c.tenant_id == tenant_id))).scalar_one()
                if held >= max_count:
                    raise QuotaExceeded(
                        "this tenant has as many categories as it may keep",
                        {"max_categories": max_count},
                    )
                row = {**values, "tenant_id": tenant_id, "key": key}
                await conn.execute(
                    categories.insert().values(**row, created_at=now, updated_at=now)
                )
            stored = (await conn.execute(select(categories).where(*where))).one()
            if audit is not None and created:
                audit = replace(audit, action=AuditAction.CATEGORY_CREATED)
            await write_event(conn, audit)
        return _category(stored), created

    async def get(self, tenant_id: str, key: str) -> Category:
        """The tenant's category of this key; NotFound otherwise."""
        found = await self.find_many(tenant_id, {key})
        if key not in found:
            raise NotFound("no such category")
        return found[key]

    async def find_many(self, tenant_id: str, keys: Collection[str]) -> dict[str, Category]:
        """The tenant's categories of these keys (one query), by key."""
        if not keys:
            return {}
        c = categories.c
        async with self._db.transaction() as conn:
            query = select(categories).where(c.tenant_id == tenant_id, one_of(conn, c.key, keys))
            rows = (await conn.execute(query)).all()
        return {row.key: _category(row) for row in rows}

    async def all(self, tenant_id: str) -> list[Category]:
        """Every category of the tenant, by key (at most HOMING_MAX_CATEGORIES)."""
        page = await self.page(tenant_id, limit=10_000)
        return page.entries

    async def page(
        self, tenant_id: str, *, limit: int = 50, cursor: str | None = None
    ) -> CategoryPage:
        """The tenant's categories by key; ``cursor`` is the last key seen."""
        c = categories.c
        query = select(categories).where(c.tenant_id == tenant_id)
        if cursor is not None:
            query = query.where(c.key > cursor)
        query = query.order_by(c.key).limit(limit + 1)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        entries = [_category(row) for row in rows[:limit]]
        return CategoryPage(entries, entries[-1].key if len(rows) > limit else None)
