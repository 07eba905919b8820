"""The scrape of real processes on PostgreSQL: ``homing run``'s API answers for its
worker children (a delivery, a failure and a dead letter, all made in a child), and a
``homing worker`` alone serves ``/metrics`` and ``/readyz`` on HOMING_METRICS_PORT."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, job, register, send
from tests.metrics_helpers import value
from tests.processes import HomingProcess, child_pids, eventually, free_port, process_env

pytestmark = pytest.mark.parametrize("database_url", ["postgres"], indirect=True)


async def _text(client: httpx.AsyncClient) -> str | None:
    try:
        response = await client.get("/metrics")
    except httpx.TransportError:
        return None
    return response.text if response.status_code == 200 else None


def _multiproc_dir(parent: int) -> Path:
    """The directory ``homing run`` handed its worker child (a process's own later
    changes to its environment are not in /proc, its child's inherited one is)."""
    [child] = child_pids(parent)
    environ = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
    [entry] = [e for e in environ if e.startswith(b"PROMETHEUS_MULTIPROC_DIR=")]
    return Path(entry.partition(b"=")[2].decode())


async def _three_jobs(tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox) -> list[str]:
    """A delivery (resend), a failure then a delivery (postmark, one 503) and a dead
    letter (sendgrid, a 400)."""
    await register(tenant, sandbox, "resend", 1)
    await register(tenant, sandbox, "postmark", 2)
    await register(tenant, sandbox, "sendgrid", 3)
    await sb.fault("postmark", status=503, count=1)
    await sb.fault("sendgrid", status=400)
    return [
        await send(tenant),
        await send(tenant, provider="postmark"),
        await send(tenant, provider="sendgrid"),
    ]


async def test_homing_run_scrapes_its_worker_childrens_counters(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    settings: Settings,
    secret_key: str,
    tmp_path: Path,
) -> None:
    port = free_port()
    env = process_env(
        settings, secret_key, HOMING_RETRY_BASE_SECONDS="0.05", HOMING_RUN_WORKER_PROCESSES="1"
    )
    run = HomingProcess(["run", "--port", str(port)], env, tmp_path / "run.log").start()
    assert run.proc is not None
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            await eventually(lambda: _text(client), timeout=60, what="homing run to serve")
            shared = _multiproc_dir(run.proc.pid)
            assert stat.S_IMODE(shared.stat().st_mode) == 0o700
            # Sent through homing run's own API: the accepts are counted in the parent.
            remote = TenantClient(client, tenant.tenant_id, tenant.key)
            ids = await _three_jobs(remote, sandbox, sb)

            async def finished() -> str | None:
                text = await _text(client)
                done = "homing_jobs_finished_total"
                if text and value(text, done, channel="email", status="failed") >= 1:
                    if value(text, done, channel="email", status="completed") >= 2:
                        return text
                return None

            text = await eventually(finished, timeout=60, what="the children's counters")
        # Every delivery happened in the worker child: this process only serves the API.
        worker_files = {p.name for p in shared.iterdir() if str(run.proc.pid) not in p.name}
        assert any(name.startswith("counter_") for name in worker_files), worker_files
    finally:
        assert run.stop() == 0, run.output()
    assert not shared.exists(), "the multiprocess directory outlived homing run"
    assert value(text, "homing_notifications_accepted_total", channel="email") == 3
    calls = "homing_provider_calls_total"
    assert value(text, calls, channel="email", provider="resend", outcome="success") == 1
    assert value(text, calls, channel="email", provider="postmark", outcome="transient") == 1
    assert value(text, calls, channel="email", provider="postmark", outcome="success") == 1
    assert value(text, calls, channel="email", provider="sendgrid", outcome="message_permanent")
    letter = {"queue": "notifications-email", "error_class": "message_permanent"}
    assert value(text, "homing_dead_letters_total", **letter) == 1
    assert value(text, "homing_provider_call_seconds_count", channel="email", provider="resend")
    assert value(text, "homing_jobs_in_flight") == 0
    assert (await job(tenant, ids[2]))["status"] == "FAILED"
    assert tenant.tenant_id not in text and "ada@example.com" not in text


async def test_a_worker_alone_serves_metrics_and_readyz_on_its_port(
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    settings: Settings,
    secret_key: str,
    tmp_path: Path,
) -> None:
    port = free_port()
    env = process_env(
        settings, secret_key, HOMING_RETRY_BASE_SECONDS="0.05", HOMING_METRICS_PORT=str(port)
    )
    worker = HomingProcess(["worker"], env, tmp_path / "worker.log").start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:

            async def ready() -> bool:
                try:
                    return (await client.get("/readyz")).status_code == 200
                except httpx.TransportError:
                    return False

            await eventually(ready, timeout=60, what="the worker to be ready")
            await register(tenant, sandbox, "resend", 1)
            await send(tenant)

            async def delivered() -> str | None:
                text = await _text(client)
                ok = {"channel": "email", "provider": "resend", "outcome": "success"}
                if text and value(text, "homing_provider_calls_total", **ok) == 1:
                    return text
                return None

            await eventually(delivered, timeout=30, what="the worker's own scrape")
            body = (await client.get("/readyz")).json()
            assert body["checks"]["worker"] == "ok"
    finally:
        assert worker.stop() == 0, worker.output()
    assert "PROMETHEUS_MULTIPROC_DIR" not in os.environ
