"""``alert_history`` beside ``alerts_firing``: the caller that starts a condition adds
its row and the one that stops it resolves that row, in the same transaction (a history
write the database refuses undoes the start or the stop with it); a lost race writes
nothing; a detail is cut to an alert's bound; the table keeps its newest
``history_rows`` whatever fires; pages chain newest first by cursor."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError

from homing.alerts import MAX_DETAIL
from homing.errors import StoreError
from homing.services import Services
from homing.store.alert_signals import HISTORY_DETAIL, AlertSignalStore
from homing.store.tables.core import alert_history, alerts_firing

AT = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


async def _count(services: Services) -> tuple[int, int]:
    async with services.db.transaction() as conn:
        firing = await conn.scalar(select(func.count()).select_from(alerts_firing))
        kept = await conn.scalar(select(func.count()).select_from(alert_history))
    return int(firing or 0), int(kept or 0)


async def test_start_and_stop_write_one_history_row_each_once(services: Services) -> None:
    signals = services.signals
    assert await signals.start("inbound_lag", "p95 700s", AT)
    assert not await signals.start("inbound_lag", "p95 800s", AT + timedelta(seconds=60))
    [open_row], _ = await signals.history(limit=10, cursor=None)
    assert (open_row.key, open_row.detail, open_row.fired_at) == ("inbound_lag", "p95 700s", AT)
    assert open_row.resolved_at is None
    assert await signals.stop("inbound_lag", AT + timedelta(minutes=5))
    assert not await signals.stop("inbound_lag", AT + timedelta(minutes=6))
    [closed], _ = await signals.history(limit=10, cursor=None)
    assert closed.id == open_row.id and closed.resolved_at == AT + timedelta(minutes=5)
    assert await _count(services) == (0, 1)


async def test_a_condition_that_fires_again_opens_a_new_row(services: Services) -> None:
    signals = services.signals
    await signals.start("dead_letter_spike", "first", AT)
    await signals.stop("dead_letter_spike", AT + timedelta(minutes=1))
    await signals.start("dead_letter_spike", "second", AT + timedelta(minutes=2))
    await signals.stop("dead_letter_spike", AT + timedelta(minutes=3))
    rows, _ = await signals.history(limit=10, cursor=None)
    assert [(r.detail, r.resolved_at) for r in rows] == [
        ("second", AT + timedelta(minutes=3)),
        ("first", AT + timedelta(minutes=1)),
    ]


async def test_the_lease_row_is_no_alert(services: Services) -> None:
    assert await services.signals.take_turn(AT, AT + timedelta(seconds=50))
    assert await _count(services) == (1, 0)


async def test_a_long_detail_is_cut_to_an_alerts_bound(services: Services) -> None:
    assert HISTORY_DETAIL == MAX_DETAIL
    await services.signals.start("inbound_quarantine", "x" * 5000, AT)
    [row], _ = await services.signals.history(limit=1, cursor=None)
    assert row.detail == "x" * MAX_DETAIL


async def test_the_history_keeps_its_newest_rows_open_or_resolved(services: Services) -> None:
    signals = AlertSignalStore(services.db, history_rows=10)
    for n in range(25):
        await signals.start(f"k{n:02}", "d", AT + timedelta(seconds=n))
        if n % 3:
            await signals.stop(f"k{n:02}", AT + timedelta(seconds=n, milliseconds=500))
    rows, more = await signals.history(limit=100, cursor=None)
    assert [r.key for r in rows] == [f"k{n:02}" for n in range(24, 14, -1)] and more is None
    assert (await _count(services))[1] == 10


async def test_pages_chain_newest_first_and_an_unknown_cursor_is_an_empty_page(
    services: Services,
) -> None:
    signals = services.signals
    for n in range(7):  # two fire in the same instant: the id breaks the tie
        await signals.start(f"k{n}", "d", AT + timedelta(seconds=n // 2))
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        rows, cursor = await signals.history(limit=3, cursor=cursor)
        pages.append([r.key for r in rows])
        if cursor is None:
            break
    assert pages == [["k6", "k5", "k4"], ["k3", "k2", "k1"], ["k0"]]
    assert await signals.history(limit=3, cursor="0194d1c0-0000-7000-8000-000000000009") == (
        [],
        None,
    )


@contextlib.asynccontextmanager
async def _history_refused(services: Services) -> AsyncIterator[None]:
    """A trigger that refuses every insert into and update of ``alert_history``."""
    if services.db.is_sqlite:
        create = [
            f"CREATE TRIGGER refuse_{verb} BEFORE {verb} ON alert_history "
            "BEGIN SELECT RAISE(ABORT, 'refused'); END"
            for verb in ("INSERT", "UPDATE")
        ]
        drop = ["DROP TRIGGER refuse_INSERT", "DROP TRIGGER refuse_UPDATE"]
    else:
        create = [
            "CREATE FUNCTION refuse_history() RETURNS trigger AS "
            "$$ BEGIN RAISE EXCEPTION 'refused'; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON alert_history "
            "FOR EACH ROW EXECUTE FUNCTION refuse_history()",
        ]
        drop = ["DROP TRIGGER refuse ON alert_history", "DROP FUNCTION refuse_history()"]
    async with services.db.transaction() as conn:
        for statement in create:
            await conn.execute(text(statement))
    try:
        yield
    finally:
        async with services.db.transaction() as conn:
            for statement in drop:
                await conn.execute(text(statement))


async def test_a_history_row_that_cannot_be_written_undoes_its_start_and_stop(
    services: Services,
) -> None:
    signals = services.signals
    await signals.start("inbound_lag", "p95 700s", AT)
    async with _history_refused(services):
        with pytest.raises((IntegrityError, StoreError)):
            await signals.start("dead_letter_spike", "60 jobs", AT)
        with pytest.raises((IntegrityError, StoreError)):
            await signals.stop("inbound_lag", AT + timedelta(minutes=1))
    assert set(await signals.firing()) == {"inbound_lag"}
    [row], _ = await signals.history(limit=10, cursor=None)
    assert row.key == "inbound_lag" and row.resolved_at is None
