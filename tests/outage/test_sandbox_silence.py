"""The provider answering nothing for a while: jobs wait, then complete.

Two kinds of silence: the provider accepts connections and never answers (the
sandbox's ``timeout`` fault, so every call times out) and the provider is gone (the
sandbox stopped, so every connection is refused). Either way each job must keep being
retried with backoff and complete when the provider is back; none may be
dead-lettered while it still has attempts.

The issue asks for "a minute" of silence. Timing scales: with ``m`` attempts and a
backoff base ``b`` the retries of one job span at least ``b/2 · (2^(m-1) - 1)``
seconds, so the base is chosen from the silence (``b = 3·silence/31`` with ``m = 6``)
to outlast it by half again. The normal suite holds the silence for 4 s; the ``slow``
run holds it for the full 60 s with the same arithmetic.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from homing.api.app import create_app
from homing.models import Plan
from homing.sandbox.server import SandboxServer
from homing.services import Services, build
from homing.settings import Settings
from homing.store.tables.core import dead_letters
from tests.conftest import TenantClient, make_tenant
from tests.e2e.conftest import register, send
from tests.figures import record
from tests.fixtures import settings_for, sqlite_url
from tests.processes import eventually

MAX_ATTEMPTS = 6
JOBS = 20


def _settings(tmp_path: Path, secret_key: str, silence: float) -> Settings:
    return settings_for(
        sqlite_url(tmp_path),
        tmp_path,
        secret_key,
        max_attempts=MAX_ATTEMPTS,
        retry_base_seconds=3 * silence / 31,
        retry_max_seconds=silence * 2,
        provider_timeout_seconds=0.5,
    )


async def _statuses(tenant: TenantClient, ids: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for job_id in ids:
        status = (await tenant.get(f"/v1/jobs/{job_id}")).json()["status"]
        found[status] = found.get(status, 0) + 1
    return found


async def _dead_letters(services: Services) -> int:
    async with services.db.transaction() as conn:
        return int((await conn.execute(select(func.count()).select_from(dead_letters))).scalar())


async def _silent_for(sandbox: SandboxServer, since: float, silence: float) -> bool:
    # Held for the whole silence, and every job has been tried (and failed) at least once.
    requests = sandbox.state.recorder.stats()["requests"]["resend"]
    return time.monotonic() - since >= silence and requests >= JOBS + 1


async def _restarted(sandbox: SandboxServer) -> SandboxServer:
    port = int(sandbox.base_url.rsplit(":", 1)[1])
    again = SandboxServer(port=port, smtp_port=None, state=sandbox.state)
    await again.start()
    return again


@pytest.mark.parametrize(
    "silence", [4.0, pytest.param(60.0, marks=pytest.mark.slow)], ids=["4s", "60s"]
)
@pytest.mark.parametrize("kind", ["no-answer", "gone"])
async def test_jobs_wait_through_a_silent_provider_and_complete(
    tmp_path: Path, secret_key: str, sandbox: SandboxServer, kind: str, silence: float
) -> None:
    services = await build(_settings(tmp_path, secret_key, silence))
    stop = asyncio.Event()
    worker = asyncio.create_task(services.worker().run(stop=stop))
    revived: SandboxServer | None = None
    transport = httpx.ASGITransport(app=create_app(services))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as api:
            tenant = await make_tenant(services, api, "silence", Plan.STARTUP)
            await register(tenant, sandbox, "resend", 1)
            if kind == "no-answer":
                await _fault(sandbox)
            else:
                await sandbox.stop()
            since = time.monotonic()
            ids = [await send(tenant, subject=f"silent {i}") for i in range(JOBS)]
            if kind == "no-answer":
                await eventually(
                    lambda: _silent_for(sandbox, since, silence),
                    timeout=silence * 3 + 30,
                    what="the silence",
                )
                sandbox.state.faults.clear()
            else:
                await eventually(
                    lambda: _held(since, silence), timeout=silence + 5, what="the silence"
                )
                revived = await _restarted(sandbox)
            await eventually(
                lambda: _all_completed(tenant, ids),
                timeout=silence * 3 + 30,
                what="every job to complete",
            )
            attempts = [len((await tenant.get(f"/v1/jobs/{i}")).json()["attempts"]) for i in ids]
            dead = await _dead_letters(services)
    finally:
        stop.set()
        await worker
        await services.aclose()
        if revived is not None:
            await revived.stop()
    record(
        "outage-provider-silence",
        kind=kind,
        silence_seconds=silence,
        jobs=JOBS,
        dead_lettered=dead,
        max_attempts_used=max(attempts),
    )
    assert dead == 0
    assert max(attempts) > 1, "the silence made jobs retry"


async def _fault(sandbox: SandboxServer) -> None:
    async with httpx.AsyncClient(base_url=sandbox.base_url) as sb:
        response = await sb.post("/_sandbox/faults", json={"provider": "resend", "mode": "timeout"})
        response.raise_for_status()


async def _held(since: float, silence: float) -> bool:
    return time.monotonic() - since >= silence


async def _all_completed(tenant: TenantClient, ids: list[str]) -> bool:
    statuses = await _statuses(tenant, ids)
    assert "FAILED" not in statuses, f"dead-lettered during the silence: {statuses}"
    return statuses == {"COMPLETED": len(ids)}
