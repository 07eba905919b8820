"""Hostile input at the operator's recent alerts: an over-long or malformed cursor, a
cursor of another kind of row, a tenant's owner or viewer (404 like any operator page),
markup in what showed an alert, a flood of conditions and a flapping one (the table
stays at HOMING_ALERT_HISTORY_ROWS), and the setting's own bounds."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError
from sqlalchemy import func, select

from homing.clock import ManualClock, as_datetime
from homing.models import Role
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import alert_history
from tests.conftest import TenantClient
from tests.console_helpers import add_user, browser, sign_in
from tests.fixtures import settings_for

ALERTS = "/operator/alerts"
KEPT = 10


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(database_url, tmp_path, secret_key, alert_history_rows=KEPT)


async def _kept(services: Services) -> int:
    async with services.db.transaction() as conn:
        return int(await conn.scalar(select(func.count()).select_from(alert_history)) or 0)


async def test_bad_cursors_are_refused_or_an_empty_page(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await services.signals.start("inbound_lag", "p95 700s", as_datetime(clock.now()))
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        await sign_in(client, "root@example.com")
        long = await client.get(ALERTS, params={"cursor": "c" * 37})
        huge = await client.get(ALERTS, params={"cursor": "c" * 10_000})
        odd = [
            await client.get(ALERTS, params={"cursor": c})
            for c in ("' OR 1=1 --", "%00", "-1", tenant.tenant_id, "\u202e" * 36)
        ]
    assert long.status_code == 422 and huge.status_code == 422
    for answer in odd:
        assert answer.status_code == 200 and "No older alerts are kept" in answer.text
        assert "inbound_lag" not in answer.text.split('id="recent"')[1]


async def test_a_tenants_owner_and_viewer_get_404(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await services.signals.start("inbound_lag", "p95 700s", as_datetime(clock.now()))
    [row], _ = await services.signals.history(limit=1, cursor=None)
    await add_user(services, "own@example.com", tenant.tenant_id, Role.OWNER)
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    answers = []
    for email in ("own@example.com", "vic@example.com"):
        async with browser(services) as client:
            await sign_in(client, email)
            answers.append(await client.get(ALERTS, params={"cursor": row.id}))
    assert [a.status_code for a in answers] == [404, 404]
    assert all("inbound_lag" not in a.text for a in answers)


async def test_markup_in_what_showed_an_alert_is_text(
    services: Services, clock: ManualClock
) -> None:
    markup = '<script>alert("x")</script>'
    await services.signals.start("provider_failing:" + markup, markup, as_datetime(clock.now()))
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        await sign_in(client, "root@example.com")
        page = await client.get(ALERTS)
    assert page.status_code == 200 and "<script>alert" not in page.text
    assert "&lt;script&gt;" in page.text.split('id="recent"')[1]


async def test_a_flood_of_conditions_and_a_flapping_one_keep_the_table_bounded(
    services: Services, clock: ManualClock
) -> None:
    signals = services.signals
    start = as_datetime(clock.now())
    for n in range(120):
        at = start + timedelta(seconds=n)
        await signals.start(f"queue_not_draining:q{n}", "x" * 2000, at)
        assert await signals.start("dead_letter_spike", "flap", at)
        assert await signals.stop("dead_letter_spike", at + timedelta(milliseconds=1))
    assert await _kept(services) == KEPT
    rows, more = await signals.history(limit=1000, cursor=None)
    assert len(rows) == KEPT and more is None
    assert all(len(r.detail) <= 500 for r in rows)
    assert {r.fired_at for r in rows} == {start + timedelta(seconds=n) for n in range(115, 120)}


@pytest.mark.parametrize("rows", [9, 100_001, -1])
def test_the_history_bound_is_itself_bounded(tmp_path: Path, secret_key: str, rows: int) -> None:
    with pytest.raises(ValidationError):
        settings_for("sqlite+aiosqlite:///x.db", tmp_path, secret_key, alert_history_rows=rows)
