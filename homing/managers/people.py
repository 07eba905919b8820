"""The console's people: adding users, signing in and out, and sessions' lifetimes.

A session token is 32 random bytes, handed to the browser once (as a cookie) and
stored only as its SHA-256. A session ends when it was idle for
HOMING_CONSOLE_SESSION_IDLE_MINUTES or lived HOMING_CONSOLE_SESSION_HOURS, whichever
comes first, or when its user signs out (there, or everywhere). A session that ended
unseen is deleted, with its flashes, at the next sign-in of anyone.

Guessing is throttled on two windows of the rate limiter (``homing.ratelimit``): the
failed sign-ins of one email (HOMING_CONSOLE_LOGIN_FAILURES in
HOMING_CONSOLE_LOCKOUT_MINUTES lock it until the oldest failure leaves the window, and
while locked even the right password is refused) and every sign-in of one client
address (HOMING_CONSOLE_LOGINS_PER_MINUTE). Password checks run off the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from homing.clock import Clock, as_datetime
from homing.crypto import hash_password, hash_token, verify_password
from homing.errors import InvalidRequest, RateLimited, Unauthenticated
from homing.ratelimit import RateLimiter
from homing.store.people import Membership, PeopleStore, Role, Session, User

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
        self, store: PeopleStore, limiter: RateLimiter, clock: Clock, rules: SessionRules
    ) -> None:
        self._store = store
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
        tenant_id: str | None = None,
        role: Role | None = None,
        operator: bool = False,
    ) -> User:
        """A new user, an operator or a member of ``tenant_id`` with ``role``."""
        email = normal_email(email)
        check_new_password(password)
        digest = await asyncio.to_thread(hash_password, password)
        now = as_datetime(self._clock.now())
        user = await self._store.add_user(email, digest, operator=operator, now=now)
        if tenant_id is not None:
            await self._store.set_role(user.id, tenant_id, role or Role.VIEWER, now)
        return user

    async def sign_in(self, email: str, password: str, client: str) -> str:
        """A new session's token for the right email and password; Unauthenticated
        otherwise (the same answer whichever was wrong), RateLimited while the email is
        locked or the client tries too often."""
        rules = self._rules
        address = await self._limiter.hit(f"console-login:client:{client}", rules.per_minute, 60)
        address.enforce(60, "sign-ins", " from this address")
        key = "console-login:email:" + hashlib.sha256(email.strip().lower().encode()).hexdigest()
        window = rules.lockout_seconds
        if not (await self._limiter.peek(key, rules.failures, window)).remaining:
            raise RateLimited(
                "too many failed sign-ins for this email; try again later",
                {"window_seconds": window},
                retry_after=window,
            )
        found = None
        if len(email) <= MAX_EMAIL and len(password) <= MAX_PASSWORD:
            found = await self._store.credentials(email.strip().lower())
        stored = found[1] if found else None
        if found is None or not await asyncio.to_thread(verify_password, stored, password):
            await self._limiter.hit(key, rules.failures, window)
            raise Unauthenticated("that email and password do not match")
        return await self.open_session(found[0])

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

    async def set_role(self, user: User, tenant_id: str, role: Role) -> None:
        await self._store.set_role(user.id, tenant_id, role, as_datetime(self._clock.now()))

    async def user(self, email: str) -> User | None:
        found = await self._store.credentials(normal_email(email))
        return found[0] if found else None
