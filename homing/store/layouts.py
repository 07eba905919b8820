"""The SQL of email layouts and their versions: the template store's statements on the
layout tables (a layout is versioned, published and rolled back as a template is), and
the two reads the console's pages add: when each layout last changed, and which
templates' live versions a layout frames."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import func, select

from homing.clock import Clock
from homing.domain.templates import PUBLISHED
from homing.store.database import Database
from homing.store.sql import one_of
from homing.store.tables.templates import layout_versions, layouts, template_versions, templates
from homing.store.templates import Kind, TemplateStore

LAYOUTS = Kind(layouts, layout_versions, "layout_id", "layout")


class LayoutStore(TemplateStore):
    """A tenant's layouts and their versions (``parts`` is ``{"html": ...}``)."""

    def __init__(self, db: Database, clock: Clock) -> None:
        super().__init__(db, clock, LAYOUTS)

    async def changed(self, tenant_id: str, layout_ids: Collection[str]) -> dict[str, datetime]:
        """When a version of each layout was last added or edited (one grouped query;
        a layout without versions is absent)."""
        if not layout_ids:
            return {}
        v = layout_versions.c
        async with self._db.transaction() as conn:
            query = (
                select(v.layout_id, func.max(v.updated_at))
                .where(v.tenant_id == tenant_id, one_of(conn, v.layout_id, layout_ids))
                .group_by(v.layout_id)
            )
            rows = (await conn.execute(query)).all()
        return {layout_id: when for layout_id, when in rows}

    async def framed(
        self, tenant_id: str, key: str, by_default: bool, limit: int
    ) -> tuple[list[str], bool]:
        """Up to ``limit`` keys of the tenant's templates, in key order, with a published
        version whose email part names the layout ``key`` (``by_default``: or names none
        and has HTML), and whether more follow. One query over the tenant's published
        versions, which the template bounds keep small."""
        t, v = templates.c, template_versions.c
        named = v.parts[("email", "layout")].as_string()
        uses = named == key
        if by_default:
            uses = uses | (named.is_(None) & v.parts[("email", "html")].as_string().is_not(None))
        query = (
            select(t.key)
            .distinct()
            .select_from(templates.join(template_versions, v.template_id == t.id))
            .where(t.tenant_id == tenant_id, v.tenant_id == tenant_id, v.state == PUBLISHED, uses)
            .order_by(t.key)
            .limit(limit + 1)
        )
        async with self._db.transaction() as conn:
            keys = list((await conn.execute(query)).scalars())
        return keys[:limit], len(keys) > limit
