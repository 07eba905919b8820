"""Suspension is a rule of the change's transaction, not of an edge (issue #22, item 3).

Whatever calls a store's change with an event of the tenant's own actor (an API key,
a console user), a suspended tenant's change rolls back with TenantSuspended and
leaves no row and no event; the operator's actors (the admin token, the ``homing``
command) and the operator's own actions (suspend, resume) still go through. The
managers that spend something before their transaction refuse first.
"""

from __future__ import annotations

import pytest

from homing.domain.audit import AuditEvent, AuditFilter
from homing.domain.tenants import Principal
from homing.errors import TenantSuspended
from homing.managers.admission import RATE_WINDOW_SECONDS
from homing.models import Actor, ActorKind, AuditAction, Plan
from homing.services import Services
from tests.adversary.suspension_helpers import email_provider

TENANTS_OWN = [Actor(ActorKind.API_KEY, "key-1"), Actor(ActorKind.USER, "user-1", "o@x.test")]
OPERATORS = [Actor(ActorKind.ADMIN, "admin token"), Actor(ActorKind.CLI, "homing")]


async def _suspended(services: Services) -> str:
    tenant, _ = await services.tenants.create("held", Plan.STARTUP)
    await services.tenant_admin.suspend(tenant.id)
    return tenant.id


async def _events(services: Services, tenant_id: str) -> int:
    events, _ = await services.audit.page(AuditFilter(tenant_id), limit=100, cursor=None)
    return len(events)


def _issued(services: Services, actor: Actor, tenant_id: str) -> AuditEvent:
    return services.audit.event(
        actor, AuditAction.API_KEY_ISSUED, tenant_id=tenant_id, target_type="api_key"
    )


@pytest.mark.parametrize("actor", TENANTS_OWN, ids=lambda a: a.kind.value)
async def test_a_suspended_tenants_own_change_rolls_back(services: Services, actor: Actor) -> None:
    tenant_id = await _suspended(services)
    events = await _events(services, tenant_id)
    with pytest.raises(TenantSuspended):
        await services.keys.issue(tenant_id, "minted", audit=_issued(services, actor, tenant_id))
    assert len(await services.keys.live(tenant_id)) == 1, "the key was rolled back"
    provider = await email_provider(services, tenant_id, "sendgrid", 100)
    moved = services.audit.event(
        actor, AuditAction.PROVIDER_REORDERED, tenant_id=tenant_id, target_type="provider"
    )
    with pytest.raises(TenantSuspended):
        await services.providers.update(tenant_id, provider, audit=moved, priority=300)
    assert (await services.providers.get(tenant_id, provider)).priority == 100
    assert await _events(services, tenant_id) == events, "no event of a refused change"


@pytest.mark.parametrize("actor", OPERATORS, ids=lambda a: a.kind.value)
async def test_the_operator_still_changes_a_suspended_tenant(
    services: Services, actor: Actor
) -> None:
    tenant_id = await _suspended(services)
    await services.keys.issue(tenant_id, "minted", audit=_issued(services, actor, tenant_id))
    assert len(await services.keys.live(tenant_id)) == 2


async def test_the_operators_console_user_resumes_a_suspended_tenant(services: Services) -> None:
    tenant_id = await _suspended(services)
    operator = Actor(ActorKind.USER, "operator-1", "op@x.test")
    resumed = services.audit.event(
        operator, AuditAction.TENANT_RESUMED, tenant_id=tenant_id, target_type="tenant"
    )
    assert not (await services.tenant_admin.unsuspend(tenant_id, resumed)).suspended


async def test_a_suspended_tenants_retry_takes_no_rate(services: Services) -> None:
    tenant_id = await _suspended(services)
    tenant = await services.tenants.get(tenant_id)
    assert tenant is not None
    with pytest.raises(TenantSuspended):
        await services.admission.retry(Principal(tenant, "console", False), "no-such-job")
    rate = await services.admission.rate_status(tenant)
    assert rate.remaining == rate.limit, (
        f"a refused retry took from the rate ({RATE_WINDOW_SECONDS}s)"
    )


async def test_a_suspended_tenants_domain_is_not_sent_to_the_provider(services: Services) -> None:
    """Refused before the provider is asked: its account points at a closed loopback
    port, so a call would fail otherwise (ProviderRefused), not be suspended."""
    tenant_id = await _suspended(services)
    provider = await email_provider(services, tenant_id, "sendgrid", 100)
    owner = Actor(ActorKind.USER, "user-1", "o@x.test")
    added = services.audit.event(
        owner, AuditAction.DOMAIN_ADDED, tenant_id=tenant_id, target_type="domain"
    )
    with pytest.raises(TenantSuspended):
        await services.domains.register(tenant_id, "mail.held.test", provider, added)
    assert await services.domains.all(tenant_id) == []
