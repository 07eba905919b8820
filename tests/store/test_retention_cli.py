"""``homing purge [--dry-run]`` from the command line, and the periodic purge of a
worker process."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from homing.cli import main
from homing.cli.runner import retention_running
from homing.clock import ManualClock
from homing.crypto import generate_master_key
from homing.errors import NotFound
from homing.services import Services, build
from homing.settings import Settings
from tests.conftest import stored_tenant
from tests.processes import eventually
from tests.store.test_retention import DAY, PAYLOAD, _finished


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Settings:
    for name in ("HOMING_DATABASE_URL", "HOMING_REDIS_URL", "HOMING_BILLING_PRICES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOMING_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}")
    monkeypatch.setenv("HOMING_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOMING_SECRET_KEY", generate_master_key())
    monkeypatch.setenv("HOMING_LOG_LEVEL", "error")
    return Settings(_env_file=None)  # type: ignore[call-arg]


async def _seed(settings: Settings) -> tuple[str, list[str]]:
    """A job finished 40 days ago, one 10 days ago and one now: (tenant, job ids)."""
    clock = ManualClock(time.time() - 40 * DAY)
    services = await build(settings, clock=clock)
    try:
        tenant_id = await stored_tenant(services)
        ids = [await _finished(services, clock, tenant_id)]
        clock.advance(30 * DAY)
        ids.append(await _finished(services, clock, tenant_id))
        clock.advance(10 * DAY)
        ids.append(await _finished(services, clock, tenant_id))
        return tenant_id, ids
    finally:
        await services.aclose()


async def _payloads(settings: Settings, tenant_id: str, ids: list[str]) -> list[object]:
    services = await build(settings, run_migrations=False)
    try:
        found: list[object] = []
        for job_id in ids:
            try:
                found.append((await services.jobs.get(tenant_id, job_id))[0].payload)
            except NotFound:
                found.append(None)
        return found
    finally:
        await services.aclose()


def test_purge_dry_run_changes_nothing_and_purge_removes(
    env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    tenant_id, ids = asyncio.run(_seed(env))
    capsys.readouterr()

    assert main(["purge", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == {
        "dry_run": True,
        "jobs": 1,
        "payloads": 1,
        "locked": False,
        "audit_events": 0,
        "invitations": 0,
        "inbound_events": 0,
        "notifications": 0,
        "digests": 0,
    }
    assert asyncio.run(_payloads(env, tenant_id, ids)) == [PAYLOAD] * 3

    assert main(["purge"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {
        "dry_run": False,
        "jobs": 1,
        "payloads": 1,
        "locked": False,
        "audit_events": 0,
        "invitations": 0,
        "inbound_events": 0,
        "notifications": 0,
        "digests": 0,
    }
    assert "jobs: 1 so far" in captured.err
    old, middle, fresh = asyncio.run(_payloads(env, tenant_id, ids))
    assert old is None
    assert isinstance(middle, dict) and "headers_sealed" not in middle
    assert fresh == PAYLOAD


async def test_the_worker_process_purges_periodically(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    old = await _finished(services, clock, tenant_id)
    clock.advance(31 * DAY)
    stop = asyncio.Event()

    async def gone() -> bool:
        try:
            await services.jobs.get(tenant_id, old)
        except NotFound:
            return True
        return False

    async with retention_running(services, stop):
        await eventually(gone)
    assert stop.is_set()
