"""Invitations: an owner (or the ``homing`` command) invites an email to a tenant with
a role; the invitee opens the link, chooses a password (or signs in as that email) and
is a member, signed in.

The token is 32 random bytes (``secrets.token_urlsafe``), in the link only: the store
keeps its SHA-256. An invitation lasts HOMING_INVITATION_TTL_HOURS. The email is read
by the one mailbox parser (``homing.addresses``), as a bare address. The link goes by
platform email (``homing.managers.platform_email``) only when the operator configured
it *and* set HOMING_PUBLIC_URL, the only base a mailed link is built on; otherwise it
is handed back once, for the inviter to pass on. So an owner cannot use Homing's mail
to spam: a tenant may invite ``PER_HOUR`` times an hour (a window of the rate limiter)
and hold ``MAX_PENDING`` pending invitations. Opening and accepting links is throttled
per client address like signing in, so tokens cannot be guessed.

Accounts are global, so a link can make a new account only when it proves its holder
reads the invited mailbox: a link that went by mail to that address, or one the
operator made with the command (the operator may add any user anyway). A link shown to
an owner proves nothing (she could open it herself and hold ``victim@corp.example``
on every tenant): its holder asks for the link by mail (``remail``: a new token, mailed
to the address; the shown one stops working), which needs platform email and a public
URL. Without them only someone who has an account already can accept a shown link, by
signing in as that account.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from datetime import timedelta

from homing.addresses import InvalidAddress, parse_mailbox
from homing.clock import Clock, as_datetime
from homing.crypto import hash_password, hash_token
from homing.domain.audit import AuditEvent
from homing.domain.invitations import Invitation
from homing.domain.people import User
from homing.errors import Conflict, Forbidden, HomingError, InvalidRequest, NotFound
from homing.managers.audit import AuditLog
from homing.managers.people import MAX_EMAIL, People, check_new_password
from homing.managers.platform_email import PlatformEmail
from homing.models import Actor, ActorKind, AuditAction, Role, new_id
from homing.ratelimit import RateLimiter
from homing.store.invitations import InvitationStore, NewInvitation

__all__ = ["INVALID", "MAX_PENDING", "PER_HOUR", "Invitations", "Invited", "invited_email"]

MAX_PENDING = 50
PER_HOUR = 20
MAX_TOKEN = 64
INVALID = "This invitation is not valid: ask the owner for a new one."
UNPROVEN = (
    "This link was not sent to your mailbox, so it cannot make a new account: ask for it"
    " by email first."
)
NO_MAIL = (
    "This Homing cannot email you to confirm your address. Ask its operator to add your"
    " account (homing user add), then open this link again and sign in."
)


@dataclass(frozen=True, slots=True)
class Invited:
    """An invitation made: its id, its link (to show once when not mailed), and
    whether it went by platform email."""

    invitation_id: str
    email: str
    link: str
    mailed: bool

    def __repr__(self) -> str:
        return f"Invited(invitation_id={self.invitation_id!r}, mailed={self.mailed})"


def invited_email(text: str) -> str:
    """The address an invitation is for, as users are stored (lower case): one bare
    mailbox read by ``parse_mailbox``, at most ``MAX_EMAIL`` characters; InvalidRequest
    for anything else."""
    try:
        mailbox = parse_mailbox(text)
    except InvalidAddress as exc:
        raise InvalidRequest(f"email: {exc}") from None
    if len(mailbox.key) > MAX_EMAIL:
        raise InvalidRequest(f"email: at most {MAX_EMAIL} characters")
    if mailbox.display_name:
        raise InvalidRequest("email: write the address alone, like ada@example.com")
    return mailbox.key


def role_of(text: str) -> Role:
    """The role a form or command names; InvalidRequest for anything else."""
    if text not in {r.value for r in Role}:
        raise InvalidRequest("role: owner or viewer")
    return Role(text)


class Invitations:
    """Makes, sends, revokes and accepts invitations."""

    def __init__(
        self,
        store: InvitationStore,
        people: People,
        audit: AuditLog,
        platform: PlatformEmail,
        limiter: RateLimiter,
        clock: Clock,
        *,
        ttl_hours: int,
        per_minute: int,
        public_url: str | None = None,
    ) -> None:
        self._store = store
        self._people = people
        self._audit = audit
        self._platform = platform
        self._limiter = limiter
        self._clock = clock
        self._ttl_hours = ttl_hours
        self._per_minute = per_minute
        self._public_url = public_url.rstrip("/") if public_url else None

    def __repr__(self) -> str:
        return "Invitations()"

    @property
    def mails(self) -> bool:
        """Whether links go by mail: platform email is on and there is a public URL."""
        return self._platform.enabled and self._public_url is not None

    @staticmethod
    def proven(invitation: Invitation) -> bool:
        """Whether the invitation's link may make a new account: it went by mail to the
        address, or the operator's command made it (``invited_by`` is None)."""
        return invitation.mailed or invitation.invited_by is None

    async def invite(
        self, tenant_id: str, tenant_name: str, email: str, role: Role, by: Actor, base: str
    ) -> Invited:
        """Invite ``email`` to the tenant (``by``: the owner or the command); the link is
        HOMING_PUBLIC_URL/invitations/<token>, or ``base`` (the inviter's own site, only
        ever shown to the inviter) when no public URL is set. Conflict for a member or a
        full tenant, RateLimited past ``PER_HOUR``."""
        email = invited_email(email)
        await self._spend(tenant_id)
        token = secrets.token_urlsafe(32)
        digest = hash_token(token)
        now = as_datetime(self._clock.now())
        invited_by = by.id if by.kind is ActorKind.USER else None
        new = NewInvitation(
            tenant_id=tenant_id,
            email=email,
            role=role,
            token_hash=digest,
            invited_by=invited_by,
            expires_at=now + self._ttl(),
        )
        event = self._audit.event(
            by,
            AuditAction.USER_INVITED,
            tenant_id=tenant_id,
            target_type="invitation",
            changes={"email": email, "role": role.value},
        )
        invitation_id = await self._store.invite(new, now, max_pending=MAX_PENDING, audit=event)
        link = f"{(self._public_url or base).rstrip('/')}/invitations/{token}"
        who = by.name if by.kind is ActorKind.USER and by.name else "The operator"
        # One mail per token: inviting again mails the new link.
        once = f"{invitation_id}:{digest[:16]}"
        mailed = self.mails and await self._mail(email, tenant_name, role, who, link, once)
        if mailed:
            await self._store.mailed(invitation_id, digest)
        return Invited(invitation_id, email, link, mailed)

    async def _spend(self, tenant_id: str) -> None:
        """One of the tenant's ``PER_HOUR`` invitation mails (or links); RateLimited past."""
        window = await self._limiter.hit(f"invitations:tenant:{tenant_id}", PER_HOUR, 3600)
        window.enforce(3600, "invitations", " for this tenant")

    def _ttl(self) -> timedelta:
        return timedelta(hours=self._ttl_hours)

    async def _mail(
        self, to: str, tenant_name: str, role: Role, who: str, link: str, once: str
    ) -> bool:
        text = (
            f"{who} invited you to {tenant_name} on Homing, as {role.value}.\n\n"
            f"Accept within {self._ttl_hours} hours: {link}\n\n"
            "If you did not expect this invitation, ignore this email.\n"
        )
        subject = f"Your invitation to {tenant_name} on Homing"
        return await self._platform.send(to, subject, text, f"invitation:{once}") is not None

    async def pending(self, tenant_id: str) -> list[Invitation]:
        return await self._store.pending(tenant_id, as_datetime(self._clock.now()))

    async def revoke(self, tenant_id: str, invitation_id: str, by: Actor) -> None:
        """End a pending invitation of the tenant; NotFound for any other."""
        event = self._audit.event(
            by,
            AuditAction.INVITATION_REVOKED,
            tenant_id=tenant_id,
            target_type="invitation",
            target_id=invitation_id,
        )
        await self._store.revoke(tenant_id, invitation_id, as_datetime(self._clock.now()), event)

    async def opened(self, token: str, client: str) -> tuple[Invitation, bool]:
        """The pending invitation of ``token`` and whether its email has a user yet;
        NotFound (one same answer) for an unknown, used, revoked or expired one,
        RateLimited when the client opens too many links."""
        decision = await self._limiter.hit(
            f"console-invitation:client:{client}", self._per_minute, 60
        )
        decision.enforce(60, "invitation links", " from this address")
        found = None
        if 0 < len(token) <= MAX_TOKEN:
            found = await self._store.by_token(hash_token(token), as_datetime(self._clock.now()))
        if found is None:
            raise NotFound(INVALID)
        return found, await self._people.user(found.email) is not None

    async def remail(self, token: str, invitation: Invitation) -> None:
        """Mail the invitation (opened with ``token``) to its address under a new token,
        the proof a new account needs; the old link stops working. Conflict when links
        cannot go by mail here, RateLimited past the tenant's ``PER_HOUR``."""
        if not self.mails:
            raise Conflict(NO_MAIL)
        await self._spend(invitation.tenant.id)
        fresh = secrets.token_urlsafe(32)
        digest = hash_token(fresh)
        now = as_datetime(self._clock.now())
        event = self._audit.event(
            Actor(ActorKind.SYSTEM, "invitation link"),
            AuditAction.INVITATION_MAILED,
            tenant_id=invitation.tenant.id,
            target_type="invitation",
            target_id=invitation.id,
            changes={"email": invitation.email},
        )
        if not await self._store.remail(invitation.id, hash_token(token), digest, now, event):
            raise NotFound(INVALID)
        link = f"{self._public_url}/invitations/{fresh}"
        once = f"{invitation.id}:{digest[:16]}"
        tenant = invitation.tenant.name
        await self._mail(invitation.email, tenant, invitation.role, "An owner", link, once)

    async def accept_new(self, invitation: Invitation, password: str) -> str:
        """Make the invitee a user with ``password`` and a member; their session token.
        Forbidden unless the link proves the mailbox (``proven``)."""
        if not self.proven(invitation):
            raise Forbidden(UNPROVEN)
        check_new_password(password)
        digest = await asyncio.to_thread(hash_password, password)
        now = as_datetime(self._clock.now())
        user = User(new_id(), invitation.email, False, now)
        row = {
            "id": user.id,
            "email": user.email,
            "password_hash": digest,
            "operator": False,
            "created_at": now,
        }
        await self._store.accept(invitation, user.id, now, self._accepted(invitation, user), row)
        return await self._people.open_session(user)

    async def accept_signed_in(self, invitation: Invitation, password: str, client: str) -> str:
        """Sign the invitee in as the invitation's email (Unauthenticated for a wrong
        password, locked out like the sign-in form), then add the membership."""
        token = await self._people.sign_in(invitation.email, password, client)
        session = await self._people.session(token)
        assert session is not None
        now = as_datetime(self._clock.now())
        try:
            event = self._accepted(invitation, session.user)
            await self._store.accept(invitation, session.user.id, now, event)
        except HomingError:
            await self._people.sign_out(session)
            raise
        return token

    def _accepted(self, invitation: Invitation, user: User) -> AuditEvent:
        return self._audit.event(
            Actor(ActorKind.USER, user.id, user.email),
            AuditAction.INVITATION_ACCEPTED,
            tenant_id=invitation.tenant.id,
            target_type="invitation",
            target_id=invitation.id,
            changes={"email": invitation.email, "role": invitation.role.value},
        )
