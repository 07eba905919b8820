"""Suspension before a change that reaches beyond its transaction.

Every change a tenant makes to itself is refused in its transaction when the tenant is
suspended (``homing.store.audit.refuse_suspended_change``). A few changes spend something
before that transaction: a retry or a redrive takes the sending rate, registering or
checking a domain asks the provider. Their managers ask here first, so a suspended
tenant spends nothing and reaches no provider (docs/security.md, "The suspended
tenant").
"""

from __future__ import annotations

from homing.errors import NotFound, TenantSuspended
from homing.models import Tenant
from homing.store.tenants import TenantStore

__all__ = ["refuse_suspended", "refuse_suspended_id"]


def refuse_suspended(tenant: Tenant) -> None:
    """TenantSuspended when ``tenant`` (as the caller read it) is suspended."""
    if tenant.suspended:
        raise TenantSuspended()


async def refuse_suspended_id(tenants: TenantStore, tenant_id: str) -> None:
    """TenantSuspended when the tenant ``tenant_id`` is suspended now; NotFound when
    there is no such tenant."""
    tenant = await tenants.get(tenant_id)
    if tenant is None:
        raise NotFound("tenant not found")
    refuse_suspended(tenant)
