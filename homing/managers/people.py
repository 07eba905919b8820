"""The console's people: adding users, signing in and out, and sessions' lifetimes.

A session token is 32 random bytes, handed to the browser once (as a cookie) and
stored only as its SHA-256. A session ends when it was idle for
HOMING_CONSOLE_SESSION_IDLE_MINUTES or lived HOMING_CONSOLE_SESSION_HOURS, whichever
comes first, or when its user signs out (there, or everywhere). A session that ended
unseen is deleted, with its flashes, at the next sign-in of anyone.

Guessing is throttled on two windows of the rate limiter (``homing.ratelimit``): the
password checks of one email (HOMING_CONSOLE_LOGIN_FAILURES in
HOMING_CONSOLE_LOCKOUT_MINUTES lock it until the oldest leaves the window, and while
locked even the right password is refused) and every sign-in of one client address
(HOMING_CONSOLE_LOGINS_PER_MINUTE). A check is counted before it runs and given back
when the password was right, so guesses sent at once, to one process or to several
sharing Redis, get no more checks than the lockout allows. An unknown email is checked
against a fixed hash, so it takes as long as a wrong password and answers the same.
Password checks run off the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from homing.clock import Clock, as_datetime
from homing.crypto import hash_password, hash_token, verify_password
from homing.domain.people import Membership, Session, User
from homing.errors import InvalidRequest, RateLimited, RateLimitUnavailable, Unauthenticated
from homing.managers.audit import AuditLog
from homing.models import Actor, AuditAction, Role
from homing.ratelimit import RateLimiter
from homing.store.people import PeopleStore

MAX_EMAIL = 254
MIN_PASSWORD = 12
MAX_PASSWORD = 256
# Touching a session writes a row: at most once a minute per session.
TOUCH_EVERY = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class SessionRules:
    """The lifetimes and sign-in limits, from the settings."""

    idle_seconds: int
    max_seconds: int
    failures: int
    lockout_seconds: int
    per_minute: int


def normal_email(email: str) -> str:
    """The email as stored: trimmed, lower-cased; InvalidRequest unless it is one
    plain address of at most 254 characters (checked in one pass)."""
    email = email.strip().lower()
    local, at, domain = email.partition("@")
    plain = all(33 <= ord(ch) < 127 for ch in email)
    if not (0 < len(email) <= MAX_EMAIL and at and local and "." in domain and plain):
        raise InvalidRequest("email: write one address, like ada@example.com")
    if "@" in domain:
        raise InvalidRequest("email: write one address, like ada@example.com")
    return email


def check_new_password(password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise InvalidRequest(
            f"password: between {MIN_PASSWORD} and {MAX_PASSWORD} characters, please"
        )


class People:
    """Users, memberships and sessions of the console."""

    def __init__(
        self,
        store: PeopleStore,
        audit: AuditLog,
        limiter: RateLimiter,
        clock: Clock,
        rules: SessionRules,
    ) -> None:
        self._store = store
        self._audit = audit
        self._limiter = limiter
        self._clock = clock
        self._rules = rules

    def __repr__(self) -> str:
        return "People()"

    async def add_user(
        self,
        email: str,
        password: str,
        *,
        actor: Actor,
        tenant_id: str | None = None,
        role: Role | None = None,
        operator: bool = False,
    ) -> User:
        """A new user, an operator and/or a member of ``tenant_id`` with ``role``: one
        ``user.added`` event (the tenant's, for a member) in the transaction that adds
        the user, which the tenant is checked in first (an unknown one adds nothing)."""
        email = normal_email(email)
        check_new_password(password)
        digest = await asyncio.to_thread(hash_password, password)
        now = as_datetime(self._clock.now())
        membership = None if tenant_id is None else (tenant_id, role or Role.VIEWER)
        event = self._audit.event(
            actor,
            AuditAction.USER_ADDED,
            tenant_id=tenant_id,
            target_type="user",
            changes={
                "email": email,
                "operator": operator,
                "role": None if membership is None else membership[1].value,
            },
        )
        return await self._store.add_user(
            email, digest, operator=operator, now=now, audit=event, membership=membership
        )

    async def sign_in(self, email: str, password: str, client: str) -> str:
        """A new session's token for the right email and password; Unauthenticated
        otherwise (the same answer, after the same work, whichever was wrong),
        RateLimited while the email is locked or the client tries too often."""
        rules = self._rules
        address = await self._limiter.hit(f"console-login:client:{client}", rules.per_minute, 60)
        address.enforce(60, "sign-ins", " from this address")
        key = "console-login:email:" + hashlib.sha256(email.strip().lower().encode()).hexdigest()
        # Counted before the check and given back on success: a burst of guesses sent
        # at once gets no more checks than the lockout allows (docs/security.md).
        attempt = await self._limiter.reserve(key, rules.failures, rules.lockout_seconds)
        if not attempt.decision.allowed:
            if attempt.decision.degraded:
                raise RateLimitUnavailable()
            raise RateLimited(
                "too many failed sign-ins for this email; try again later",
                {"window_seconds": rules.lockout_seconds},
                retry_after=rules.lockout_seconds,
            )
        user = await self._checked(email, password)
        if user is None:
            raise Unauthenticated("that email and password do not match")
        await self._limiter.forgive(attempt)
        return await self.open_session(user)

    async def _checked(self, email: str, password: str) -> User | None:
        """The user whose email and password these are, or None. An unknown email or an
        oversized input costs what a wrong password does: one lookup (of "", which no
        user has, for an oversized email) and one Argon2 check (against a fixed hash)."""
        fits = len(email) <= MAX_EMAIL and len(password) <= MAX_PASSWORD
        found = await self._store.credentials(email.strip().lower() if fits else "")
        stored = found[1] if found and fits else None
        right = await asyncio.to_thread(verify_password, stored, password[:MAX_PASSWORD])
        return found[0] if found and right else None

    async def open_session(self, user: User) -> str:
        """A new session of ``user``: its token, for the browser's cookie only."""
        token = secrets.token_urlsafe(32)
        now = as_datetime(self._clock.now())
        ends = now + timedelta(seconds=self._rules.max_seconds)
        await self._store.close_ended(now - timedelta(seconds=self._rules.idle_seconds), now)
        await self._store.open_session(user.id, hash_token(token), now, ends)
        return token

    async def session(self, token: str) -> Session | None:
        """The live session of ``token``; None (and the session closed) when it is
        unknown, idle for too long or past its absolute end."""
        if not 0 < len(token) <= 64:
            return None
        found = await self._store.session(hash_token(token))
        if found is None:
            return None
        now = as_datetime(self._clock.now())
        idle = now - found.last_seen_at > timedelta(seconds=self._rules.idle_seconds)
        if idle or now >= found.expires_at:
            await self._store.close_session(found.id)
            return None
        if now - found.last_seen_at >= TOUCH_EVERY:
            await self._store.touch(found.id, now)
        return found

    async def sign_out(self, session: Session) -> None:
        await self._store.close_session(session.id)

    async def sign_out_everywhere(self, user: User) -> int:
        """Close every session of the user, this one included."""
        return await self._store.close_sessions_of(user.id)

    async def memberships(self, user: User) -> list[Membership]:
        return await self._store.memberships(user.id)

    async def membership(self, user: User, tenant_id: str) -> Membership | None:
        return await self._store.membership(user.id, tenant_id)

    async def set_role(self, user: User, tenant_id: str, role: Role, actor: Actor) -> None:
        """Make ``user`` a member of ``tenant_id`` with ``role``: one
        ``member.role_changed`` event (``from`` None for a new member) in the same
        transaction; nothing when they hold that role already."""
        held = await self._store.membership(user.id, tenant_id)
        if held is not None and held.role is role:
            return
        event = self._audit.event(
            actor,
            AuditAction.MEMBER_ROLE_CHANGED,
            tenant_id=tenant_id,
            target_type="member",
            target_id=user.id,
            changes={
                "email": user.email,
                "role": {"from": None if held is None else held.role.value, "to": role.value},
            },
        )
        now = as_datetime(self._clock.now())
        await self._store.set_role(user.id, tenant_id, role, now, event)

    async def reset_password(self, user: User, password: str, *, actor: Actor) -> None:
        """Give ``user`` a new password (checked as a new one is) and sign them out
        everywhere, with one ``user.password_set`` event (platform-wide: a user is not
        one tenant's). ``homing run --demo`` uses it for its login."""
        check_new_password(password)
        digest = await asyncio.to_thread(hash_password, password)
        event = self._audit.event(
            actor,
            AuditAction.USER_PASSWORD_SET,
            tenant_id=None,
            target_type="user",
            changes={"email": user.email},
        )
        await self._store.set_password(user.id, digest, event)

    async def user(self, email: str) -> User | None:
        found = await self._store.credentials(normal_email(email))
        return found[0] if found else None
