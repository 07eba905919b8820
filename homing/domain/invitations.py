"""An invitation to a tenant's console; the SQL is ``homing.store.invitations``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from homing.models import Role, Tenant


@dataclass(kw_only=True, frozen=True, slots=True)
class Invitation:
    """One invitation as stored (no token: only its hash is kept)."""

    id: str
    tenant: Tenant
    email: str
    role: Role
    invited_by: str | None
    created_at: datetime
    expires_at: datetime
    mailed: bool = False
