"""A change and its audit event commit together: when the event cannot be written,
the change is rolled back with it (and a change that fails writes no event)."""

from __future__ import annotations

import pytest
from sqlalchemy import Table, func, select
from sqlalchemy.exc import IntegrityError

from homing.domain.audit import AuditEvent, AuditFilter
from homing.errors import NotFound
from homing.models import Actor, ActorKind, AuditAction, Plan
from homing.services import Services
from homing.store.tables.audit import audit_events
from homing.store.tables.core import tenants

SYSTEM = Actor(ActorKind.SYSTEM, "test")


def _event(services: Services, tenant_id: str | None, action: AuditAction) -> AuditEvent:
    return services.audit.event(SYSTEM, action, tenant_id=tenant_id, target_type="test")


async def _count(services: Services, table: Table = audit_events) -> int:
    async with services.db.transaction() as conn:
        return int(await conn.scalar(select(func.count()).select_from(table)) or 0)


async def test_a_key_stays_live_when_its_revocation_event_cannot_be_written(
    services: Services,
) -> None:
    tenant, _ = await services.tenants.create("acme", Plan.STARTUP)
    issued, _ = await services.keys.issue(tenant.id, "second")
    taken = _event(services, tenant.id, AuditAction.API_KEY_REVOKED)
    await services.audit.record(taken)
    with pytest.raises(IntegrityError):
        await services.keys.revoke(tenant.id, issued.id, audit=taken)
    assert issued.id in {k.id for k in await services.keys.live(tenant.id)}
    assert await _count(services) == 1


async def test_no_tenant_is_created_when_its_event_cannot_be_written(
    services: Services,
) -> None:
    taken = _event(services, None, AuditAction.TENANT_CREATED)
    await services.audit.record(taken)
    with pytest.raises(IntegrityError):
        await services.tenants.create("acme", Plan.FREE, audit=taken)
    assert await _count(services, tenants) == 0


async def test_the_event_names_what_the_store_created(services: Services) -> None:
    event = _event(services, None, AuditAction.TENANT_CREATED)
    tenant, _ = await services.tenants.create("acme", Plan.FREE, audit=event)
    events, cursor = await services.audit.page(AuditFilter(tenant.id), limit=10, cursor=None)
    assert [(e.tenant_id, e.target_id, e.action) for e in events] == [
        (tenant.id, tenant.id, AuditAction.TENANT_CREATED)
    ]
    assert cursor is None


async def test_a_change_that_finds_nothing_writes_no_event(services: Services) -> None:
    tenant, _ = await services.tenants.create("acme", Plan.STARTUP)
    missing = "0194d1c0-0000-7000-8000-000000000000"
    event = _event(services, tenant.id, AuditAction.PROVIDER_REMOVED)
    with pytest.raises(NotFound):
        await services.providers.delete(tenant.id, missing, audit=event)
    with pytest.raises(NotFound):
        await services.tenants.update(missing, event, name="x")
    assert await _count(services) == 0
