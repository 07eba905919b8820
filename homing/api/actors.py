"""Who a request acts as, for the audit log: a tenant's API key or the operator."""

from __future__ import annotations

from homing.domain.tenants import Principal
from homing.models import Actor, ActorKind

__all__ = ["ADMIN", "actor_of"]

# The operator behind ``/admin/v1`` (one shared token: no finer identity exists).
ADMIN = Actor(ActorKind.ADMIN, "admin token")


def actor_of(principal: Principal) -> Actor:
    """The API key a tenant's request used (its id, never the key)."""
    return Actor(ActorKind.API_KEY, principal.api_key_id)
