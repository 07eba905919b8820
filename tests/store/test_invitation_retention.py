"""Retention of invitations on SQLite and PostgreSQL, with a manual clock: accepted,
revoked and expired ones go HOMING_INVITATION_RETENTION_DAYS after they ended, in
bounded batches, one worker at a time; pending ones and recently ended ones stay; a
dry run counts and changes nothing; the setting is bounded."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sqlalchemy import select, text

from homing.clock import ManualClock
from homing.managers.audit import CLI_ACTOR
from homing.managers.retention import PURGED
from homing.models import Role
from homing.services import Services
from homing.settings import Settings
from homing.store.retention import RETENTION_LOCK_KEY
from homing.store.tables.console import invitations
from tests.conftest import stored_tenant

DAY = 86_400.0
PASSWORD = "a long enough password"


async def _invite(services: Services, tenant_id: str, email: str) -> str:
    invited = await services.invitations.invite(
        tenant_id, "acme", email, Role.VIEWER, CLI_ACTOR, "http://h"
    )
    return invited.invitation_id


async def _stored(services: Services) -> set[str]:
    async with services.db.transaction() as conn:
        return {str(i) for i in (await conn.scalars(select(invitations.c.id))).all()}


async def _accept(services: Services, tenant_id: str, invitation_id: str) -> None:
    [found] = [i for i in await services.invitations.pending(tenant_id) if i.id == invitation_id]
    await services.invitations.accept_new(found, PASSWORD)


async def test_ended_invitations_go_after_their_retention_and_pending_ones_stay(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    accepted = await _invite(services, tenant_id, "a@example.com")
    revoked = await _invite(services, tenant_id, "b@example.com")
    expired = await _invite(services, tenant_id, "c@example.com")
    await _accept(services, tenant_id, accepted)
    await services.invitations.revoke(tenant_id, revoked, CLI_ACTOR)
    # 31 days on: the first two ended 31 days ago, the third expired 28 days ago (72 h).
    clock.advance(31 * DAY)
    pending = await _invite(services, tenant_id, "d@example.com")
    just_revoked = await _invite(services, tenant_id, "e@example.com")
    await services.invitations.revoke(tenant_id, just_revoked, CLI_ACTOR)
    everything = {accepted, revoked, expired, pending, just_revoked}
    assert await _stored(services) == everything

    counted = await services.retention().run(dry_run=True)
    assert (counted.invitations, counted.dry_run) == (2, True)
    assert await _stored(services) == everything

    before = PURGED.labels(kind="invitations")._value.get()
    # One row a batch: the purge goes on until a batch comes back short.
    services.settings = services.settings.changed(retention_batch_size=1)
    report = await services.retention().run()
    assert (report.invitations, report.locked) == (2, False)
    assert PURGED.labels(kind="invitations")._value.get() == before + 2
    assert await _stored(services) == {expired, pending, just_revoked}

    clock.advance(2.5 * DAY)
    assert (await services.retention().run()).invitations == 1
    assert await _stored(services) == {pending, just_revoked}
    [still] = await services.invitations.pending(tenant_id)
    assert still.id == pending
    assert (await services.retention().run()).invitations == 0


async def test_a_shorter_retention_purges_sooner(services: Services, clock: ManualClock) -> None:
    tenant_id = await stored_tenant(services)
    revoked = await _invite(services, tenant_id, "b@example.com")
    await services.invitations.revoke(tenant_id, revoked, CLI_ACTOR)
    clock.advance(2 * DAY)
    assert (await services.retention().run()).invitations == 0
    services.settings = services.settings.changed(invitation_retention_days=1)
    assert (await services.retention().run()).invitations == 1
    assert await _stored(services) == set()


# PostgreSQL only: SQLite has one process, and BEGIN IMMEDIATE serialises its transactions.
@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_invitations_are_not_purged_while_another_worker_purges(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    revoked = await _invite(services, tenant_id, "b@example.com")
    await services.invitations.revoke(tenant_id, revoked, CLI_ACTOR)
    clock.advance(31 * DAY)
    # Jobs and payloads kept for ever: the invitations' batch is the first to ask.
    keep = {"retention_days": 0, "payload_retention_days": 0}
    services.settings = services.settings.changed(**keep)
    async with services.db.transaction() as conn:
        await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": RETENTION_LOCK_KEY})
        report = await services.retention().run()
    assert (report.invitations, report.locked) == (0, True)
    assert await _stored(services) == {revoked}
    assert (await services.retention().run()).invitations == 1


@pytest.mark.parametrize("days", ["0", "3651", "-1", "thirty"])
def test_the_invitation_retention_is_one_day_to_ten_years(
    monkeypatch: pytest.MonkeyPatch, days: str
) -> None:
    monkeypatch.setenv("HOMING_INVITATION_RETENTION_DAYS", days)
    with pytest.raises(ValidationError, match="invitation_retention_days"):
        Settings(_env_file=None)  # type: ignore[call-arg]
