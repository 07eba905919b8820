"""``homing reconcile [--dry-run]`` from the command line on both databases, and the
periodic pass of a worker process."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from sqlalchemy import delete, text, update

from homing.channels import Channel
from homing.cli import main
from homing.cli.runner import reconciler_running
from homing.crypto import generate_master_key
from homing.domain.accepting import NewJob
from homing.models import DeliveryMode, Priority, Queue
from homing.services import Services, build
from homing.settings import Settings
from homing.store.ledger import RECONCILE_LOCK_KEY
from homing.store.tables.core import jobs, queue_entries
from tests.conftest import stored_tenant
from tests.fixtures import settings_for
from tests.processes import eventually


def _new(tenant_id: str, n: int) -> NewJob:
    payload = {"to": "ada@example.com", "from": "a@acme.example", "subject": f"s{n}", "text": "t"}
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload=payload,
        delivery=DeliveryMode.AT_LEAST_ONCE,
    )


async def _broken(services: Services) -> list[str]:
    """Three jobs, each outside the invariant in its own way, made by hand."""
    tenant_id = await stored_tenant(services)
    ids = [(await services.jobs.accept(_new(tenant_id, n))).job.id for n in range(3)]
    missing, finished, stale = ids
    async with services.db.transaction() as conn:
        await conn.execute(delete(queue_entries).where(queue_entries.c.job_id == missing))
        await conn.execute(update(jobs).where(jobs.c.id == finished).values(status="FAILED"))
        await conn.execute(update(jobs).where(jobs.c.id == stale).values(status="PROCESSING"))
        # A lease that ran out a day ago, and nobody claimed the entry since.
        await conn.execute(
            update(queue_entries)
            .where(queue_entries.c.job_id == stale)
            .values(
                claim_token="0194d1c0-0000-7000-8000-00000000dead",
                available_at=time.time() - 86_400,
            )
        )
    return ids


async def _seed(settings: Settings) -> None:
    services = await build(settings, run_migrations=True)
    try:
        await _broken(services)
    finally:
        await services.aclose()


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, database_url: str) -> Settings:
    for name in ("HOMING_REDIS_URL", "HOMING_BILLING_PRICES", "HOMING_ALERT_SLACK_WEBHOOK_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOMING_DATABASE_URL", database_url)
    monkeypatch.setenv("HOMING_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOMING_SECRET_KEY", generate_master_key())
    monkeypatch.setenv("HOMING_LOG_LEVEL", "error")
    return Settings(_env_file=None)  # type: ignore[call-arg]


def test_reconcile_dry_run_counts_and_reconcile_mends(
    env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(_seed(env))
    capsys.readouterr()
    found = {"missing_entry": 1, "terminal_entry": 1, "stale_lease": 1, "unaccounted": 3}

    assert main(["reconcile", "--dry-run"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert dry == {**found, "dry_run": True, "mended": 0, "locked": False}

    assert main(["reconcile"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        **found,
        "dry_run": False,
        "mended": 3,
        "locked": False,
    }
    assert main(["reconcile"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert (after["unaccounted"], after["mended"]) == (0, 0)


async def test_the_worker_process_reconciles_periodically(services: Services) -> None:
    missing, _, _ = await _broken(services)
    stop = asyncio.Event()

    async def requeued() -> bool:
        async with services.db.transaction() as conn:
            entry = await conn.scalar(
                queue_entries.select().where(queue_entries.c.job_id == missing)
            )
        return entry is not None

    async with reconciler_running(services, stop):
        await eventually(requeued)
    assert stop.is_set()


@pytest.mark.postgres
async def test_one_process_reconciles_at_a_time_on_postgres(
    postgres_url: str, tmp_path: Path, secret_key: str
) -> None:
    services = await build(settings_for(postgres_url, tmp_path, secret_key))
    try:
        await services.reconciler().run()  # whatever earlier tests left here, mended
        await _broken(services)
        async with services.db.transaction() as conn:
            # Another process's pass holds the lock for as long as this block runs.
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": RECONCILE_LOCK_KEY})
            locked = await services.reconciler().run()
        assert (locked.locked, locked.mended) == (True, 0)
        free = await services.reconciler().run()
        assert (free.locked, free.unaccounted, free.mended) == (False, 3, 3)
    finally:
        await services.aclose()
