"""Real processes: a worker killed mid-send, and `homing run` end to end."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from homing.clock import ManualClock
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.admission_helpers import EMAIL, unique_prefix
from tests.conftest import REDIS_URL, TenantClient, make_tenant, stored_provider
from tests.e2e.conftest import Sandbox, deliver, job, register, send
from tests.processes import (
    HomingProcess,
    child_pids,
    eventually,
    free_port,
    homing_workers,
    process_env,
)


async def test_a_worker_killed_mid_send_is_replaced_after_its_lease(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
    settings: Settings,
    secret_key: str,
    tmp_path: Path,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", mode="accept_then_hang", count=1)
    job_id = await send(tenant)
    env = process_env(
        settings, secret_key, HOMING_LEASE_SECONDS="30", HOMING_PROVIDER_TIMEOUT_SECONDS="120"
    )
    worker = HomingProcess(["worker"], env, tmp_path / "worker.log").start()
    try:
        await eventually(
            lambda: sb.messages("resend"), timeout=60, what="the worker's send to arrive"
        )
    finally:
        worker.kill()
    assert (await job(tenant, job_id))["status"] == "PROCESSING"
    assert await deliver(services) == 0, "the dead worker's lease still holds the job"
    # The manual clock started before the worker claimed; move well past its lease.
    clock.advance(settings.worker.lease_seconds + 30)
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    # The dead worker's call is in the history, its outcome unknown (docs/reliability.md,
    # "Calls whose outcome was lost").
    assert [(a["number"], a["outcome"]) for a in body["attempts"]] == [
        (1, "unknown"),
        (2, "success"),
    ]
    # The resend carried the same Idempotency-Key, so Resend delivered it once.
    messages = await sb.messages("resend")
    assert len(messages) == 1
    assert messages[0]["idempotency_key"] == f"homing-{job_id}"


async def test_homing_run_accepts_and_delivers_on_the_embedded_default(
    sandbox: SandboxServer, sb: Sandbox, tmp_path: Path
) -> None:
    data_dir = tmp_path / "embedded"
    env = {
        "HOMING_DATA_DIR": str(data_dir),
        "HOMING_POLL_INTERVAL_SECONDS": "0.05",
        "HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
    }
    # `homing tenant` does not migrate (only migrate/run/api/worker do): `homing run`
    # migrates the embedded database from nothing as it starts, and the tenant is
    # created once it listens (no `homing migrate` process first).
    port = free_port()
    server = HomingProcess(["run", "--port", str(port)], env, tmp_path / "run.log").start()
    secret = "re_live_Sup3rSecretValue_98765"
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            await eventually(lambda: _healthy(client), timeout=60, what="homing run to listen")
            created = subprocess.run(
                [sys.executable, "-m", "homing", "tenant", "create", "acme", "--plan", "STARTUP"],
                env=server.env,
                capture_output=True,
                check=True,
                text=True,
            )
            tenant = json.loads(created.stdout)
            assert set(tenant) == {"tenant_id", "api_key"}
            assert (data_dir / "secret.key").stat().st_mode & 0o777 == 0o600
            client.headers["Authorization"] = f"Bearer {tenant['api_key']}"
            created_provider = await client.post(
                "/v1/providers",
                json={
                    "channel": "email",
                    "provider": "resend",
                    "credentials": {"api_key": secret},
                    "config": {"base_url": sandbox.provider_base_url("resend")},
                },
            )
            assert created_provider.status_code == 201, created_provider.text
            assert secret not in created_provider.text
            accepted = await client.post(
                "/v1/notifications/email",
                json={
                    "to": "ada@example.com",
                    "from": "a@acme.example",
                    "subject": "s",
                    "text": "t",
                },
            )
            assert accepted.status_code == 202, accepted.text
            job_id = accepted.json()["id"]
            await eventually(
                lambda: _status(client, job_id, "COMPLETED"), what="the job to complete"
            )
    finally:
        assert server.stop() == 0, server.output()
    [message] = await sb.messages("resend")
    assert message["job_id"] == job_id
    for path in data_dir.iterdir():
        assert secret.encode() not in path.read_bytes(), f"plaintext credential in {path.name}"
    assert secret not in server.output()
    assert tenant["api_key"] not in server.output()


async def _healthy(client: httpx.AsyncClient) -> bool:
    try:
        return (await client.get("/healthz")).status_code == 200
    except httpx.TransportError:
        return False


async def _status(client: httpx.AsyncClient, job_id: str, status: str) -> bool:
    return bool((await client.get(f"/v1/jobs/{job_id}")).json()["status"] == status)


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_job_accepted_elsewhere_wakes_an_idle_worker_at_once(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    settings: Settings,
    secret_key: str,
    tmp_path: Path,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    # The worker polls only every 60 s: only LISTEN/NOTIFY can wake it in time.
    env = process_env(settings, secret_key, HOMING_POLL_INTERVAL_SECONDS="60")
    with homing_workers(1, env, tmp_path):
        await eventually(lambda: _listening(services), timeout=60, what="the worker to LISTEN")
        started = time.monotonic()
        job_id = await send(tenant)
        await eventually(lambda: sb.messages("resend"), timeout=10, what="the delivery")
        assert time.monotonic() - started < 5
    assert (await job(tenant, job_id))["status"] == "COMPLETED"


async def _listening(services: Services) -> bool:
    query = text(
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND query LIKE 'LISTEN %'"
    )
    async with services.db.transaction() as conn:
        return int((await conn.execute(query)).scalar_one()) >= 2


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_several_worker_processes_keep_each_key_in_order(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    settings: Settings,
    secret_key: str,
    tmp_path: Path,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await sb.fault("resend", status=503, count=4)
    await sb.fault("resend", latency_ms=5)
    keys = ["alpha", "beta", "gamma"]
    for step in range(12):
        for key in keys:
            await send(tenant, subject=f"{key} {step}", ordering_key=key)
    for i in range(5):
        await send(tenant, subject=f"free {i}")
    env = process_env(settings, secret_key, HOMING_RETRY_BASE_SECONDS="0.05")
    with homing_workers(3, env, tmp_path):
        await eventually(
            lambda: _received(sb, 3 * 12 + 5), timeout=60, what="every job to be delivered"
        )
    subjects = [m["subject"] for m in await sb.messages("resend")]
    for key in keys:
        assert [s for s in subjects if s.startswith(key)] == [f"{key} {i}" for i in range(12)]


async def _received(sb: Sandbox, count: int) -> bool:
    return len(await sb.messages("resend")) >= count


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_several_worker_processes_serve_a_quiet_tenant_before_a_flood(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    settings: Settings,
    secret_key: str,
    tmp_path: Path,
) -> None:
    quiet = await make_tenant(services, tenant.api, "quiet")
    await register(tenant, sandbox, "resend", 1)
    await register(quiet, sandbox, "resend", 1)
    await sb.fault("resend", latency_ms=20)
    for i in range(60):
        await send(tenant, subject=f"flood {i}")
    for i in range(6):
        await send(quiet, subject=f"quiet {i}")
    env = process_env(
        settings, secret_key, HOMING_WORKER_CONCURRENCY="4", HOMING_TENANT_INFLIGHT="2"
    )
    with homing_workers(2, env, tmp_path):
        await eventually(lambda: _received(sb, 66), timeout=60, what="every job")
    subjects = [m["subject"] for m in await sb.messages("resend")]
    last_quiet = max(i for i, s in enumerate(subjects) if s.startswith("quiet"))
    # FIFO would put the quiet tenant's jobs after all 60; fairness interleaves them.
    assert last_quiet < 24, subjects[: last_quiet + 1]


def _listening_pids(port: int, pids: list[int]) -> set[int]:
    """Which of ``pids`` hold a socket listening on TCP ``port`` (from /proc)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rpartition(":")[2], 16) == port and fields[3] == "0A":
                inodes.add(f"socket:[{fields[9]}]")
    holders = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if fd.readlink().as_posix() in inodes:
                    holders.add(pid)
            except OSError:
                continue
    return holders


@pytest.mark.redis
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_homing_api_serves_one_port_from_several_processes(
    services: Services, tenant: TenantClient, settings: Settings, secret_key: str, tmp_path: Path
) -> None:
    await stored_provider(services, tenant.tenant_id)  # accepted, never delivered
    port = free_port()
    env = process_env(
        settings,
        secret_key,
        HOMING_API_PROCESSES="3",
        HOMING_REDIS_URL=REDIS_URL,
        HOMING_REDIS_KEY_PREFIX=unique_prefix(),
    )
    server = HomingProcess(["api", "--port", str(port)], env, tmp_path / "api.log").start()
    assert server.proc is not None
    headers = {"Authorization": f"Bearer {tenant.key}"}
    try:
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base, timeout=10) as client:
            await eventually(lambda: _healthy(client), timeout=60, what="homing api to listen")
        serving = [server.proc.pid, *child_pids(server.proc.pid)]
        assert len(serving) == 3, serving
        # The parent serves only once its children do: all listen when it answers.
        assert _listening_pids(port, serving) == set(serving)
        for _ in range(12):  # a connection each, spread over the processes by the kernel
            async with httpx.AsyncClient(base_url=base, headers=headers, timeout=10) as client:
                accepted = await client.post("/v1/notifications/email", json=EMAIL)
                assert accepted.status_code == 202, accepted.text
    finally:
        assert server.stop() == 0, server.output()
    assert not any(Path(f"/proc/{pid}").exists() for pid in serving), "children outlived api"


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_homing_run_on_postgres_delivers_from_worker_processes(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    settings: Settings,
    secret_key: str,
    tmp_path: Path,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    port = free_port()
    env = process_env(settings, secret_key, HOMING_RUN_WORKER_PROCESSES="2")
    server = HomingProcess(["run", "--port", str(port)], env, tmp_path / "run.log").start()
    assert server.proc is not None
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            await eventually(lambda: _healthy(client), timeout=60, what="homing run to listen")
        children = child_pids(server.proc.pid)
        assert len(children) == 2, children
        job_id = await send(tenant)
        await eventually(
            lambda: sb.messages("resend"), timeout=60, what="a worker process to deliver"
        )
    finally:
        assert server.stop() == 0, server.output()
    assert not any(Path(f"/proc/{pid}").exists() for pid in children), "children outlived run"
    assert (await job(tenant, job_id))["status"] == "COMPLETED"
