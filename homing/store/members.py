"""The SQL of a tenant's members: listed a page at a time, a role changed, removed.

A tenant never loses its last owner: demoting or removing an owner counts the owners
in the same transaction (locking their rows on PostgreSQL, so two owners removing each
other at once cannot both succeed). Every change writes its audit event in its own
transaction (``write_event``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.domain.audit import AuditEvent
from homing.errors import Conflict, NotFound
from homing.models import Role
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.tables.console import memberships, users

_m = memberships.c
LAST_OWNER = "A tenant needs an owner: make someone else an owner first."


@dataclass(frozen=True, slots=True)
class Member:
    """One member of a tenant: who, their role, since when."""

    user_id: str
    email: str
    role: Role
    since: datetime


async def _role(conn: AsyncConnection, tenant_id: str, user_id: str) -> Role:
    query = select(_m.role).where(_m.tenant_id == tenant_id, _m.user_id == user_id)
    row = (await conn.execute(query)).first()
    if row is None:
        raise NotFound("There is no such member of this tenant.")
    return Role(row.role)


async def _keep_an_owner(conn: AsyncConnection, tenant_id: str) -> None:
    """Conflict unless the tenant has another owner besides the one leaving."""
    owners = (
        select(_m.user_id)
        .where(_m.tenant_id == tenant_id, _m.role == Role.OWNER.value)
        .limit(2)
        .with_for_update()
    )
    if len((await conn.execute(owners)).all()) < 2:
        raise Conflict(LAST_OWNER)


class MemberStore:
    """A tenant's memberships, seen from the tenant."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def page(
        self, tenant_id: str, *, limit: int, after: str | None
    ) -> tuple[list[Member], str | None]:
        """Members by email; ``after`` is the last email of the page before."""
        query = (
            select(_m.user_id, users.c.email, _m.role, _m.created_at)
            .join(users, users.c.id == _m.user_id)
            .where(_m.tenant_id == tenant_id)
        )
        if after is not None:
            query = query.where(users.c.email > after)
        query = query.order_by(users.c.email).limit(limit + 1)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        found = [Member(r.user_id, r.email, Role(r.role), r.created_at) for r in rows[:limit]]
        return found, found[-1].email if len(rows) > limit else None

    async def email_of(self, tenant_id: str, user_id: str) -> tuple[str, Role]:
        """The member's email and role; NotFound when they are no member of the tenant."""
        query = (
            select(users.c.email, _m.role)
            .join(users, users.c.id == _m.user_id)
            .where(_m.tenant_id == tenant_id, _m.user_id == user_id)
        )
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            raise NotFound("There is no such member of this tenant.")
        return row.email, Role(row.role)

    async def change_role(
        self, tenant_id: str, user_id: str, role: Role, audit: AuditEvent
    ) -> bool:
        """Give the member ``role``; False when they held it already (no event)."""
        async with self._db.transaction() as conn:
            held = await _role(conn, tenant_id, user_id)
            if held is role:
                return False
            if held is Role.OWNER:
                await _keep_an_owner(conn, tenant_id)
            await conn.execute(
                update(memberships)
                .where(_m.tenant_id == tenant_id, _m.user_id == user_id)
                .values(role=role.value)
            )
            await write_event(conn, audit)
        return True

    async def remove(self, tenant_id: str, user_id: str, audit: AuditEvent) -> None:
        """End the membership (the user's next request to the tenant is 404)."""
        async with self._db.transaction() as conn:
            if await _role(conn, tenant_id, user_id) is Role.OWNER:
                await _keep_an_owner(conn, tenant_id)
            await conn.execute(
                delete(memberships).where(_m.tenant_id == tenant_id, _m.user_id == user_id)
            )
            await write_event(conn, audit)
