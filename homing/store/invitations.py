"""The SQL of invitations: to become a member of a tenant with a role, by a link.

An invitation is stored by the SHA-256 of its token (``homing.crypto.hash_token``),
never the token. It is pending until it is accepted, revoked or past ``expires_at``;
one tenant holds at most one pending invitation per email (inviting again replaces its
token) and at most ``max_pending`` in all. Accepting checks the invitation is still
pending in the same transaction that adds the membership, so a token works once.
Every change writes its audit event in its own transaction (``write_event``). An
ended invitation is deleted by the retention purge (``homing.store.retention``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.domain.audit import AuditEvent
from homing.domain.invitations import Invitation
from homing.errors import Conflict, NotFound
from homing.models import Role, new_id
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.tables.console import invitations, memberships, users
from homing.store.tables.core import tenants
from homing.store.tenants import tenant_of

_c = invitations.c


@dataclass(kw_only=True, frozen=True, slots=True)
class NewInvitation:
    """What an owner (or the ``homing`` command) asks for, ready to store."""

    tenant_id: str
    email: str
    role: Role
    token_hash: str
    invited_by: str | None
    expires_at: datetime


def _invitation(row: Any) -> Invitation:
    return Invitation(
        id=row.invitation_id,
        tenant=tenant_of(row),
        email=row.email,
        role=Role(row.role),
        invited_by=row.invited_by,
        created_at=row.invitation_created_at,
        expires_at=row.expires_at,
        mailed=bool(row.mailed),
    )


def _pending(now: datetime) -> Any:
    return and_(_c.accepted_at.is_(None), _c.revoked_at.is_(None), _c.expires_at > now)


_SELECT = select(
    tenants,
    _c.id.label("invitation_id"),
    _c.email,
    _c.role,
    _c.invited_by,
    _c.created_at.label("invitation_created_at"),
    _c.expires_at,
    _c.mailed,
).join(tenants, tenants.c.id == _c.tenant_id)


async def _is_member(conn: AsyncConnection, tenant_id: str, email: str) -> bool:
    query = (
        select(memberships.c.user_id)
        .join(users, users.c.id == memberships.c.user_id)
        .where(memberships.c.tenant_id == tenant_id, users.c.email == email)
    )
    return (await conn.execute(query)).first() is not None


class InvitationStore:
    """Invitations: made, replaced, listed, found by token, revoked and accepted."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def invite(
        self, new: NewInvitation, now: datetime, *, max_pending: int, audit: AuditEvent
    ) -> str:
        """The id of the pending invitation of ``new.email`` (replacing the token of one
        that was pending already); Conflict when the email is a member already or the
        tenant holds ``max_pending`` pending invitations."""
        async with self._db.transaction() as conn:
            if await _is_member(conn, new.tenant_id, new.email):
                raise Conflict("This person is a member of the tenant already.")
            mine = and_(_c.tenant_id == new.tenant_id, _pending(now))
            found = (await conn.execute(select(_c.id).where(mine, _c.email == new.email))).first()
            fields = {
                "role": new.role.value,
                "token_hash": new.token_hash,
                "invited_by": new.invited_by,
                "created_at": now,
                "expires_at": new.expires_at,
                "mailed": False,
            }
            if found is not None:
                invitation_id = str(found.id)
                await conn.execute(update(invitations).where(_c.id == invitation_id).values(fields))
            else:
                count = await conn.scalar(select(func.count()).select_from(invitations).where(mine))
                if int(count or 0) >= max_pending:
                    raise Conflict(
                        f"This tenant has {max_pending} pending invitations, the most it may"
                        " hold: revoke some or wait for them to be accepted."
                    )
                invitation_id = new_id()
                row = {"id": invitation_id, "tenant_id": new.tenant_id, "email": new.email}
                await conn.execute(invitations.insert().values(**row, **fields))
            await write_event(conn, audit.about(target_id=invitation_id))
        return invitation_id

    async def pending(self, tenant_id: str, now: datetime) -> list[Invitation]:
        """The tenant's pending invitations, newest first."""
        query = _SELECT.where(_c.tenant_id == tenant_id, _pending(now)).order_by(
            _c.created_at.desc(), _c.id.desc()
        )
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [_invitation(row) for row in rows]

    async def by_token(self, token_hash: str, now: datetime) -> Invitation | None:
        """The pending invitation stored under ``token_hash``; None for any other."""
        query = _SELECT.where(_c.token_hash == token_hash, _pending(now))
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
        return _invitation(row) if row else None

    async def mailed(self, invitation_id: str, token_hash: str) -> None:
        """Record that the link of ``token_hash`` went by mail (a newer token is not)."""
        query = update(invitations).where(_c.id == invitation_id, _c.token_hash == token_hash)
        async with self._db.transaction() as conn:
            await conn.execute(query.values(mailed=True))

    async def remail(
        self, invitation_id: str, old_hash: str, new_hash: str, now: datetime, audit: AuditEvent
    ) -> bool:
        """Replace the token ``old_hash`` of a pending invitation by ``new_hash``, about to
        go by mail (the old link stops working); False when it is no longer pending."""
        mine = (_c.id == invitation_id, _c.token_hash == old_hash, _pending(now))
        async with self._db.transaction() as conn:
            result = await conn.execute(
                update(invitations).where(*mine).values(token_hash=new_hash, mailed=True)
            )
            if result.rowcount != 1:
                return False
            await write_event(conn, audit)
        return True

    async def revoke(
        self, tenant_id: str, invitation_id: str, now: datetime, audit: AuditEvent
    ) -> None:
        """End a pending invitation of the tenant; NotFound for any other id."""
        async with self._db.transaction() as conn:
            result = await conn.execute(
                update(invitations)
                .where(_c.id == invitation_id, _c.tenant_id == tenant_id, _pending(now))
                .values(revoked_at=now)
            )
            if result.rowcount != 1:
                raise NotFound("There is no such pending invitation.")
            await write_event(conn, audit)

    async def accept(
        self,
        invitation: Invitation,
        user_id: str,
        now: datetime,
        audit: AuditEvent,
        new_user: dict[str, Any] | None = None,
    ) -> None:
        """Make ``user_id`` a member with the invitation's role (adding ``new_user``'s
        row first when given) and mark the invitation accepted, at once; NotFound when it
        is no longer pending, Conflict when ``new_user``'s email is taken meanwhile."""
        try:
            async with self._db.transaction() as conn:
                result = await conn.execute(
                    update(invitations)
                    .where(_c.id == invitation.id, _pending(now))
                    .values(accepted_at=now)
                )
                if result.rowcount != 1:
                    raise NotFound("This invitation is not valid: ask the owner for a new one.")
                if new_user is not None:
                    await conn.execute(users.insert().values(**new_user))
                await _join(conn, user_id, invitation, now)
                await write_event(conn, audit)
        except IntegrityError:
            raise Conflict("a user with this email exists already: sign in instead") from None


async def _join(conn: AsyncConnection, user_id: str, invitation: Invitation, now: datetime) -> None:
    """The membership the invitation grants; an existing one keeps the higher role."""
    m = memberships.c
    tenant_id = invitation.tenant.id
    where = (m.user_id == user_id, m.tenant_id == tenant_id)
    held = (await conn.execute(select(m.role).where(*where))).first()
    if held is None:
        row = {"user_id": user_id, "tenant_id": tenant_id, "created_at": now}
        await conn.execute(memberships.insert().values(**row, role=invitation.role.value))
    elif invitation.role is Role.OWNER:
        await conn.execute(update(memberships).where(*where).values(role=Role.OWNER.value))
