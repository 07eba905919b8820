"""The console's people: users, their memberships of tenants, their sessions.

A user signs in with an email and a password (stored as Argon2id only); a membership
gives them one role in one tenant; the ``operator`` flag gives them the platform.
Sessions are stored by the SHA-256 of their token (``homing.crypto.hash_token``) with
their idle and absolute ends; the manager (``homing.managers.people``) decides.
Every write that gives a user a role (operator, or a tenant's owner or viewer) writes
its audit event in the same transaction (``write_event``).
"""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.domain.audit import AuditEvent
from homing.domain.people import Membership, Session, User
from homing.errors import Conflict, NotFound
from homing.models import Role, new_id
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.tables.console import console_sessions, memberships, users
from homing.store.tables.core import tenants
from homing.store.tenants import tenant_of


def _user(row: Any) -> User:
    return User(id=row.id, email=row.email, operator=row.operator, created_at=row.created_at)


async def _tenant_exists(conn: AsyncConnection, tenant_id: str) -> None:
    """NotFound unless the tenant exists (checked before anything is written)."""
    query = select(tenants.c.id).where(tenants.c.id == tenant_id)
    if (await conn.execute(query)).first() is None:
        raise NotFound("tenant not found")


async def _join(
    conn: AsyncConnection, user_id: str, tenant_id: str, role: Role, now: datetime
) -> None:
    """The user's one membership of the tenant, with ``role`` (a former one replaced)."""
    c = memberships.c
    await conn.execute(delete(memberships).where(c.user_id == user_id, c.tenant_id == tenant_id))
    row = {"user_id": user_id, "tenant_id": tenant_id, "role": role.value, "created_at": now}
    await conn.execute(memberships.insert().values(**row))


class PeopleStore:
    """The SQL of users, memberships and console sessions."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add_user(
        self,
        email: str,
        password_hash: str,
        *,
        operator: bool,
        now: datetime,
        audit: AuditEvent,
        membership: tuple[str, Role] | None = None,
    ) -> User:
        """A new user (an operator, and/or a member of ``membership``'s tenant with its
        role) and its audit event, in one transaction, after the tenant is checked:
        NotFound when the tenant does not exist, Conflict when the email is taken."""
        user_id = new_id()
        row = {
            "id": user_id,
            "email": email,
            "password_hash": password_hash,
            "operator": operator,
            "created_at": now,
        }
        try:
            async with self._db.transaction() as conn:
                if membership is not None:
                    await _tenant_exists(conn, membership[0])
                await conn.execute(users.insert().values(**row))
                if membership is not None:
                    await _join(conn, user_id, *membership, now)
                await write_event(conn, audit.about(target_id=user_id))
        except IntegrityError:
            raise Conflict("a user with this email exists already") from None
        return _user(SimpleNamespace(**row))

    async def credentials(self, email: str) -> tuple[User, str] | None:
        """The user of ``email`` and their password hash, to check a sign-in."""
        async with self._db.transaction() as conn:
            row = (await conn.execute(select(users).where(users.c.email == email))).first()
        return (_user(row), row.password_hash) if row else None

    async def set_password(self, user_id: str, password_hash: str, audit: AuditEvent) -> int:
        """A user's new password hash and its audit event, in one transaction that also
        ends every session of theirs (a changed password signs them out everywhere);
        how many sessions it ended. NotFound when there is no such user."""
        async with self._db.transaction() as conn:
            result = await conn.execute(
                update(users).where(users.c.id == user_id).values(password_hash=password_hash)
            )
            if result.rowcount == 0:
                raise NotFound("no such user")
            ended = await conn.execute(
                delete(console_sessions).where(console_sessions.c.user_id == user_id)
            )
            await write_event(conn, audit.about(target_id=user_id))
        return int(ended.rowcount or 0)

    async def set_role(
        self, user_id: str, tenant_id: str, role: Role, now: datetime, audit: AuditEvent
    ) -> None:
        """Make the user a member of the tenant with ``role`` (replacing a former role),
        with its audit event, in one transaction; NotFound when the tenant does not
        exist."""
        async with self._db.transaction() as conn:
            await _tenant_exists(conn, tenant_id)
            await _join(conn, user_id, tenant_id, role, now)
            await write_event(conn, audit)

    async def memberships(self, user_id: str) -> list[Membership]:
        """The user's tenants and roles, by tenant name."""
        query = (
            select(tenants, memberships.c.role)
            .join(memberships, memberships.c.tenant_id == tenants.c.id)
            .where(memberships.c.user_id == user_id)
            .order_by(tenants.c.name, tenants.c.id)
        )
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [Membership(tenant_of(row), Role(row.role)) for row in rows]

    async def membership(self, user_id: str, tenant_id: str) -> Membership | None:
        """The user's role in one tenant, or None when they are no member of it."""
        query = (
            select(tenants, memberships.c.role)
            .join(memberships, memberships.c.tenant_id == tenants.c.id)
            .where(memberships.c.user_id == user_id, memberships.c.tenant_id == tenant_id)
        )
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
        return Membership(tenant_of(row), Role(row.role)) if row else None

    async def open_session(
        self, user_id: str, token_hash: str, now: datetime, expires_at: datetime
    ) -> None:
        row = {
            "id": new_id(),
            "token_hash": token_hash,
            "user_id": user_id,
            "created_at": now,
            "last_seen_at": now,
            "expires_at": expires_at,
        }
        async with self._db.transaction() as conn:
            await conn.execute(console_sessions.insert().values(**row))

    async def session(self, token_hash: str) -> Session | None:
        """The session stored under ``token_hash`` with its user, expired or not."""
        s = console_sessions.c
        query = (
            select(
                s.id,
                s.last_seen_at,
                s.expires_at,
                users.c.id.label("user_id"),
                users.c.email,
                users.c.operator,
                users.c.created_at,
            )
            .join(users, users.c.id == s.user_id)
            .where(s.token_hash == token_hash)
        )
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            return None
        user = User(row.user_id, row.email, row.operator, row.created_at)
        return Session(row.id, user, row.last_seen_at, row.expires_at)

    async def touch(self, session_id: str, now: datetime) -> None:
        async with self._db.transaction() as conn:
            await conn.execute(
                update(console_sessions)
                .where(console_sessions.c.id == session_id)
                .values(last_seen_at=now)
            )

    async def close_session(self, session_id: str) -> None:
        async with self._db.transaction() as conn:
            await conn.execute(delete(console_sessions).where(console_sessions.c.id == session_id))

    async def close_ended(self, idle_before: datetime, now: datetime) -> int:
        """Delete every session idle since before ``idle_before`` or past its absolute
        end (and, by cascade, its flashes); how many there were."""
        s = console_sessions.c
        ended = (s.last_seen_at < idle_before) | (s.expires_at <= now)
        async with self._db.transaction() as conn:
            result = await conn.execute(delete(console_sessions).where(ended))
        return int(result.rowcount)

    async def close_sessions_of(self, user_id: str) -> int:
        """End every session of the user (sign out everywhere); how many there were."""
        async with self._db.transaction() as conn:
            result = await conn.execute(
                delete(console_sessions).where(console_sessions.c.user_id == user_id)
            )
        return int(result.rowcount)
