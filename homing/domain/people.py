"""Console users, their memberships and sessions; the SQL is ``homing.store.people``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from homing.models import Role, Tenant


@dataclass(frozen=True, slots=True)
class User:
    """A person who signs in to the console; never carries the password hash."""

    id: str
    email: str
    operator: bool
    created_at: datetime

    def __repr__(self) -> str:
        return f"User(id={self.id!r}, operator={self.operator})"


@dataclass(frozen=True, slots=True)
class Membership:
    """One user's role in one tenant."""

    tenant: Tenant
    role: Role


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in session as stored (no token: only its hash is kept)."""

    id: str
    user: User
    last_seen_at: datetime
    expires_at: datetime
