"""The SQL of templates and their versions; every statement is scoped by tenant.

A template is found by its id or its key (``ref``: keys never look like an id, so one
``WHERE`` serves both). Versions are numbered per template in the transaction that adds
them (the unique ``(template_id, number)`` refuses a racing twin); publishing retires
the locale's live version and makes this one live in one transaction, so a template
has at most one live version per locale at any moment. The bounds on templates per
tenant and versions per template are counted in the adding transaction, after a lock on
the parent row on PostgreSQL (SQLite's ``BEGIN IMMEDIATE`` serialises writers already).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Table, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.domain.audit import AuditEvent
from homing.domain.templates import DRAFT, PUBLISHED, RETIRED, TemplateRow, VersionRow
from homing.errors import Conflict, NotFound
from homing.models import new_id
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.sql import one_of
from homing.store.tables.core import tenants
from homing.store.tables.templates import template_versions, templates


@dataclass(frozen=True, slots=True)
class Kind:
    """What a store versions: templates, or email layouts (``homing.store.layouts``).
    Both keep the same columns; a version's parent column is named after its kind."""

    parents: Table
    versions: Table
    parent: str  # the versions' column naming their parent
    noun: str  # in messages: "template", "layout"


TEMPLATES = Kind(templates, template_versions, "template_id", "template")


def _template(row: Any) -> TemplateRow:
    return TemplateRow(
        id=row.id,
        tenant_id=row.tenant_id,
        key=row.key,
        name=row.name,
        default_locale=row.default_locale,
        created_at=row.created_at,
    )


def _version(row: Any, parent: str = "template_id") -> VersionRow:
    return VersionRow(
        id=row.id,
        template_id=getattr(row, parent),
        tenant_id=row.tenant_id,
        number=row.number,
        locale=row.locale,
        state=row.state,
        parts=dict(row.parts),
        variables=None if row.variables is None else dict(row.variables),
        revision=row.revision,
        created_at=row.created_at,
        updated_at=row.updated_at,
        published_at=row.published_at,
    )


class _Row:
    """Attribute access to a dict, for ``_version``."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


async def _lock(conn: AsyncConnection, query: Any) -> None:
    """Hold ``query``'s row until the transaction ends (PostgreSQL; SQLite holds the
    database already)."""
    if conn.dialect.name == "postgresql":
        await conn.execute(query.with_for_update())


class TemplateStore:
    """Templates (or another ``Kind``) and their versions, by tenant."""

    def __init__(self, db: Database, clock: Clock, kind: Kind = TEMPLATES) -> None:
        self._db = db
        self._clock = clock
        self._kind = kind
        self._table = kind.parents
        self._vtable = kind.versions
        self._t = kind.parents.c
        self._v = kind.versions.c
        self._p = kind.versions.c[kind.parent]

    def _row(self, row: Any) -> VersionRow:
        return _version(row, self._kind.parent)

    def _now(self) -> datetime:
        return as_datetime(self._clock.now())

    async def create(
        self,
        tenant_id: str,
        key: str,
        name: str,
        default_locale: str,
        most: int,
        audit: AuditEvent | None = None,
    ) -> TemplateRow:
        """A new template; Conflict when the key is taken or the tenant holds ``most``."""
        row = TemplateRow(
            id=new_id(),
            tenant_id=tenant_id,
            key=key,
            name=name,
            default_locale=default_locale,
            created_at=self._now(),
        )
        try:
            async with self._db.transaction() as conn:
                await _lock(conn, select(tenants.c.id).where(tenants.c.id == tenant_id))
                count = await conn.scalar(
                    select(func.count())
                    .select_from(self._table)
                    .where(self._t.tenant_id == tenant_id)
                )
                if (count or 0) >= most:
                    raise Conflict(
                        f"a tenant holds at most {most} {self._kind.noun}s", {"limit": most}
                    )
                await conn.execute(
                    self._table.insert().values(
                        id=row.id,
                        tenant_id=tenant_id,
                        key=key,
                        name=name,
                        default_locale=default_locale,
                        created_at=row.created_at,
                    )
                )
                await write_event(conn, audit and audit.about(target_id=row.id))
        except IntegrityError:
            raise Conflict(f"a {self._kind.noun} with this key exists", {"key": key}) from None
        return row

    async def get(self, tenant_id: str, ref: str) -> TemplateRow | None:
        """The tenant's template whose id or key is ``ref``."""
        query = select(self._table).where(
            self._t.tenant_id == tenant_id, (self._t.id == ref) | (self._t.key == ref)
        )
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
        return None if row is None else _template(row)

    async def lookup(
        self, tenant_id: str, refs: Collection[str]
    ) -> list[tuple[TemplateRow, list[VersionRow]]]:
        """The tenant's templates whose id or key is one of ``refs``, each with its live
        versions: one query (a send's only read of templates)."""
        joined = self._table.outerjoin(
            self._vtable,
            (self._p == self._t.id)
            & (self._v.tenant_id == tenant_id)
            & (self._v.state == PUBLISHED),
        )
        columns = [c.label(f"t_{c.name}") for c in self._t]
        columns += [c.label(f"v_{c.name}") for c in self._v]
        async with self._db.transaction() as conn:
            query = (
                select(*columns)
                .select_from(joined)
                .where(
                    self._t.tenant_id == tenant_id,
                    one_of(conn, self._t.id, refs) | one_of(conn, self._t.key, refs),
                )
            )
            rows = (await conn.execute(query)).mappings().all()
        found: dict[str, tuple[TemplateRow, list[VersionRow]]] = {}
        for row in rows:
            t = {name[2:]: value for name, value in row.items() if name.startswith("t_")}
            entry = found.setdefault(t["id"], (TemplateRow(**t), []))
            if row["v_id"] is not None:
                v = {name[2:]: value for name, value in row.items() if name.startswith("v_")}
                entry[1].append(self._row(_Row(v)))
        return list(found.values())

    async def page(
        self, tenant_id: str, limit: int, after: str | None
    ) -> tuple[list[TemplateRow], bool]:
        """Up to ``limit`` templates in id order after ``after``, and whether more follow."""
        query = select(self._table).where(self._t.tenant_id == tenant_id)
        if after is not None:
            query = query.where(self._t.id > after)
        query = query.order_by(self._t.id).limit(limit + 1)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [_template(r) for r in rows[:limit]], len(rows) > limit

    async def delete(
        self, tenant_id: str, template_id: str, audit: AuditEvent | None = None
    ) -> None:
        """Remove the template and all its versions; NotFound when it is not the tenant's."""
        async with self._db.transaction() as conn:
            await conn.execute(
                delete(self._vtable).where(self._v.tenant_id == tenant_id, self._p == template_id)
            )
            gone = await conn.execute(
                delete(self._table).where(self._t.tenant_id == tenant_id, self._t.id == template_id)
            )
            if gone.rowcount == 0:
                raise NotFound(f"no such {self._kind.noun}")
            await write_event(conn, audit)

    async def add_version(
        self,
        template: TemplateRow,
        locale: str,
        parts: dict[str, Any],
        variables: dict[str, Any] | None,
        most: int,
        audit: AuditEvent | None = None,
    ) -> VersionRow:
        """A new draft numbered after the template's last; Conflict past ``most``."""
        now = self._now()
        mine = (self._v.tenant_id == template.tenant_id, self._p == template.id)
        try:
            async with self._db.transaction() as conn:
                await _lock(conn, select(self._t.id).where(self._t.id == template.id))
                count, last = (
                    await conn.execute(
                        select(func.count(), func.max(self._v.number))
                        .select_from(self._vtable)
                        .where(*mine)
                    )
                ).one()
                if count >= most:
                    raise Conflict(
                        f"a {self._kind.noun} holds at most {most} versions", {"limit": most}
                    )
                values = {
                    "id": new_id(),
                    self._kind.parent: template.id,
                    "tenant_id": template.tenant_id,
                    "number": (last or 0) + 1,
                    "locale": locale,
                    "state": DRAFT,
                    "parts": parts,
                    "variables": variables,
                    "revision": 0,
                    "created_at": now,
                    "updated_at": now,
                    "published_at": None,
                }
                await conn.execute(self._vtable.insert().values(**values))
                if audit is not None:
                    number = {"version": values["number"], "locale": locale}
                    await write_event(conn, replace(audit, changes={**audit.changes, **number}))
        except IntegrityError:
            raise Conflict("another version was added at the same time; try again") from None
        return self._row(_Row(values))

    async def version(self, template: TemplateRow, ref: str | int) -> VersionRow | None:
        """One version of the template, by id or (an int) by number."""
        which = self._v.number == ref if isinstance(ref, int) else self._v.id == ref
        query = select(self._vtable).where(
            self._v.tenant_id == template.tenant_id, self._p == template.id, which
        )
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
        return None if row is None else self._row(row)

    async def versions(
        self, template: TemplateRow, limit: int, before: int | None
    ) -> tuple[list[VersionRow], bool]:
        """Up to ``limit`` versions, newest first, numbered below ``before``."""
        query = select(self._vtable).where(
            self._v.tenant_id == template.tenant_id, self._p == template.id
        )
        if before is not None:
            query = query.where(self._v.number < before)
        query = query.order_by(self._v.number.desc()).limit(limit + 1)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [self._row(r) for r in rows[:limit]], len(rows) > limit

    async def edit(
        self,
        template: TemplateRow,
        version_id: str,
        changes: dict[str, Any],
        audit: AuditEvent | None = None,
    ) -> VersionRow:
        """Apply ``changes`` (locale, parts, variables) to a draft; NotFound when there
        is no such version, Conflict when it is published or retired (immutable)."""
        mine = (
            self._v.tenant_id == template.tenant_id,
            self._p == template.id,
            self._v.id == version_id,
        )
        async with self._db.transaction() as conn:
            changed = await conn.execute(
                update(self._vtable)
                .where(*mine, self._v.state == DRAFT)
                .values(**changes, revision=self._v.revision + 1, updated_at=self._now())
            )
            row = (await conn.execute(select(self._vtable).where(*mine))).first()
            if row is None:
                raise NotFound("no such version")
            if changed.rowcount == 0:
                raise Conflict(
                    "a published version cannot change; add a new version", {"state": row.state}
                )
            await write_event(conn, audit)
        return self._row(row)

    async def publish(
        self, template: TemplateRow, version_id: str, audit: AuditEvent | None = None
    ) -> VersionRow:
        """Make the version the live one of its locale (retiring the one before); a
        published version is answered as it is. NotFound when there is no such version."""
        mine = (self._v.tenant_id == template.tenant_id, self._p == template.id)
        now = self._now()
        async with self._db.transaction() as conn:
            await _lock(conn, select(self._t.id).where(self._t.id == template.id))
            row = (
                await conn.execute(select(self._vtable).where(*mine, self._v.id == version_id))
            ).first()
            if row is None:
                raise NotFound("no such version")
            if row.state != PUBLISHED:
                if audit is not None:
                    which = {"version": row.number, "locale": row.locale}
                    which["rollback"] = row.state == RETIRED
                    await write_event(conn, replace(audit, changes={**audit.changes, **which}))
                await conn.execute(
                    update(self._vtable)
                    .where(*mine, self._v.locale == row.locale, self._v.state == PUBLISHED)
                    .values(state=RETIRED, updated_at=now)
                )
                await conn.execute(
                    update(self._vtable)
                    .where(*mine, self._v.id == version_id)
                    .values(state=PUBLISHED, published_at=now, updated_at=now)
                )
                row = (
                    await conn.execute(select(self._vtable).where(*mine, self._v.id == version_id))
                ).one()
        return self._row(row)

    async def live(self, tenant_id: str, template_ids: Collection[str]) -> list[VersionRow]:
        """The live (published) versions of these templates, every locale (one query)."""
        if not template_ids:
            return []
        async with self._db.transaction() as conn:
            query = select(self._vtable).where(
                self._v.tenant_id == tenant_id,
                one_of(conn, self._p, template_ids),
                self._v.state == PUBLISHED,
            )
            rows = (await conn.execute(query)).all()
        return [self._row(r) for r in rows]
