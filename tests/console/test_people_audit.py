"""Every way a person gains a role writes one audit event with the change (issue #22,
item 7): a membership given to an existing user records ``member.role_changed``."""

from __future__ import annotations

from homing.domain.audit import AuditFilter
from homing.managers.audit import CLI_ACTOR
from homing.models import AuditAction, Role
from homing.services import Services
from tests.conftest import stored_tenant
from tests.console_helpers import add_user


async def test_a_role_given_records_one_event_and_the_same_role_again_none(
    services: Services,
) -> None:
    acme = await stored_tenant(services, "Acme")
    globex = await stored_tenant(services, "Globex")
    ada = await add_user(services, "ada@example.com", acme, Role.OWNER)
    for role in (Role.VIEWER, Role.VIEWER, Role.OWNER):
        await services.people.set_role(ada, globex, role, CLI_ACTOR)
    events, _ = await services.audit.page(AuditFilter(tenant_id=globex), limit=10, cursor=None)
    assert [e.action for e in events] == [AuditAction.MEMBER_ROLE_CHANGED] * 2
    assert [e.changes["role"] for e in events] == [
        {"from": "viewer", "to": "owner"},
        {"from": None, "to": "viewer"},
    ]
    assert {(e.target_id, e.actor) for e in events} == {(ada.id, CLI_ACTOR)}
    seat = await services.people.membership(ada, globex)
    assert seat is not None and seat.role is Role.OWNER
    [added] = (await services.audit.page(AuditFilter(tenant_id=acme), limit=10, cursor=None))[0]
    assert added.action is AuditAction.USER_ADDED and added.target_id == ada.id
