"""The real image (Containerfile, scripts/image) run with podman: the embedded default on
SQLite, then the scaled pair (an API and a worker container on the host's PostgreSQL),
each delivering one email through a ``homing sandbox`` on the host's loopback.

Marked ``slow`` (with ``container``): .ci/run builds the image first, then runs it in
the slow pass; ``scripts/image`` here only reuses the cached layers."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from homing.sandbox import VENDOR_PREFIXES
from tests.conftest import POSTGRES_URL
from tests.processes import HomingProcess, eventually, free_port

pytestmark = [pytest.mark.slow, pytest.mark.container, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
# crun and the default limits fail on these hosts' hybrid cgroups (docs/deploy.md).
RUN = [
    "podman", "run", "--runtime=runc",
    "--ulimit", "nofile=20000:20000", "--ulimit", "nproc=32768:32768",
    "--network=host", "--read-only", "--tmpfs", "/tmp",
]  # fmt: skip
SECRET_KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
LOOPBACK = {"HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128"}


@pytest.fixture(scope="module")
def image() -> str:
    built = subprocess.run(
        [str(ROOT / "scripts" / "image")], capture_output=True, text=True, timeout=1200
    )
    assert built.returncode == 0, built.stderr[-4000:]
    return built.stdout.strip().splitlines()[-1]


@pytest.fixture
def host_sandbox(tmp_path: Path) -> Iterator[str]:
    """``homing sandbox`` on the host's loopback; its base URL."""
    port, smtp = free_port(), free_port()
    args = ["sandbox", "--host", "127.0.0.1", "--port", str(port), "--smtp-port", str(smtp)]
    proc = HomingProcess(args, {}, tmp_path / "sandbox.log").start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.stop()


class Container:
    def __init__(self, image: str, name: str, env: dict[str, str], args: list[str]) -> None:
        self.name = f"homing-test-{name}-{uuid.uuid4().hex[:8]}"
        flags = [f"--env={k}={v}" for k, v in env.items()]
        self.command = [*RUN, "--detach", "--name", self.name, *flags, image, *args]

    def start(self, *volumes: str) -> Container:
        command = list(self.command)
        for volume in volumes:
            command[2:2] = ["--volume", volume]
        subprocess.run(command, check=True, capture_output=True, timeout=60)
        return self

    def exec(self, *args: str) -> str:
        done = subprocess.run(
            ["podman", "exec", self.name, "homing", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def logs(self) -> str:
        done = subprocess.run(["podman", "logs", self.name], capture_output=True, text=True)
        return done.stdout + done.stderr

    def stop(self) -> int:
        """SIGTERM, up to 30 s to finish; the exit code (0 when it stopped cleanly)."""
        subprocess.run(["podman", "stop", "--time", "30", self.name], capture_output=True)
        code = subprocess.run(
            ["podman", "inspect", "--format", "{{.State.ExitCode}}", self.name],
            capture_output=True,
            text=True,
        ).stdout.strip()
        return int(code)

    def remove(self) -> None:
        subprocess.run(["podman", "rm", "--force", self.name], capture_output=True)


async def _ready(client: httpx.AsyncClient) -> bool:
    try:
        return (await client.get("/readyz", timeout=5)).status_code == 200
    except httpx.TransportError:
        return False


async def _deliver_one(port: int, api_key: str, sandbox: str) -> dict[str, Any]:
    """Register the sandbox's Resend, send an email through the API on ``port``, wait
    for the job to be COMPLETED; the job and the message the sandbox received."""
    headers = {"Authorization": f"Bearer {api_key}"}
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=10
    ) as client:
        await eventually(lambda: _ready(client), timeout=60, what="the container's /readyz")
        provider = await client.post(
            "/v1/providers",
            json={
                "channel": "email",
                "provider": "resend",
                "credentials": {"api_key": "re_live_ContainerTest_12345"},
                "config": {"base_url": sandbox + VENDOR_PREFIXES["resend"]},
            },
        )
        assert provider.status_code == 201, provider.text
        subject = f"image {uuid.uuid4().hex}"
        accepted = await client.post(
            "/v1/notifications/email",
            json={"to": "ada@example.com", "from": "a@acme.example", "subject": subject,
                  "text": "from a container"},
        )  # fmt: skip
        assert accepted.status_code == 202, accepted.text
        job_id = accepted.json()["id"]

        async def completed() -> dict[str, Any] | None:
            body: dict[str, Any] = (await client.get(f"/v1/jobs/{job_id}")).json()
            return body if body["status"] == "COMPLETED" else None

        job = await eventually(completed, timeout=60, what="the job to be COMPLETED")
    async with httpx.AsyncClient(base_url=sandbox, timeout=10) as http:
        messages = (await http.get("/_sandbox/messages")).json()
    return {"job": job, "messages": [m for m in messages if m.get("job_id") == job_id]}


def _healthcheck(container: Container) -> int:
    """The image's HEALTHCHECK run once, now (podman schedules it through systemd,
    which these hosts lack): its exit code."""
    return subprocess.run(
        ["podman", "healthcheck", "run", container.name], capture_output=True, timeout=60
    ).returncode


async def test_the_embedded_image_delivers_on_sqlite_and_stops_cleanly(
    image: str, host_sandbox: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    os.chown(data, 10001, 10001)  # the image's user; the tests run as root
    port = free_port()
    container = Container(image, "embedded", {"HOMING_PORT": str(port), **LOOPBACK}, ["run"])
    container.start(f"{data}:/var/lib/homing")
    try:
        # `homing tenant` refuses until `homing run` has brought the schema up to date.
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            await eventually(lambda: _ready(client), timeout=60, what="the container's /readyz")
        tenant = json.loads(container.exec("tenant", "create", "acme", "--plan", "STARTUP"))
        got = await _deliver_one(port, tenant["api_key"], host_sandbox)
        assert len(got["messages"]) == 1, got
        assert _healthcheck(container) == 0, container.logs()
        assert (data / "homing.db").exists(), "SQLite lives on the volume"
        assert (data / "secret.key").stat().st_uid == 10001, "written as the image's user"
        assert container.stop() == 0, container.logs()
        assert tenant["api_key"] not in container.logs()
    finally:
        container.remove()


@pytest.fixture
async def fresh_database() -> Any:
    name = f"homing_image_{uuid.uuid4().hex[:10]}"
    admin_dsn = POSTGRES_URL.replace("postgresql+asyncpg://", "postgresql://")
    admin = await asyncpg.connect(admin_dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    base = POSTGRES_URL.rsplit("/", 1)[0]
    yield f"{base}/{name}"
    admin = await asyncpg.connect(admin_dsn)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def test_the_scaled_pair_delivers_on_postgresql(
    image: str, host_sandbox: str, fresh_database: str
) -> None:
    port = free_port()
    env = {
        "HOMING_DATABASE_URL": fresh_database,
        "HOMING_SECRET_KEY": SECRET_KEY,
        "HOMING_PORT": str(port),
        "HOMING_POLL_INTERVAL_SECONDS": "0.2",
        **LOOPBACK,
    }
    flags = [f"--env={k}={v}" for k, v in env.items()]
    migrate = subprocess.run(
        [*RUN, "--rm", *flags, image, "migrate"], capture_output=True, text=True, timeout=120
    )
    assert migrate.returncode == 0, migrate.stderr
    created = subprocess.run(
        [*RUN, "--rm", *flags, image, "tenant", "create", "acme", "--plan", "STARTUP"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert created.returncode == 0, created.stderr
    tenant = json.loads(created.stdout)
    # The API does not deliver: only the worker container can complete the job.
    api = Container(image, "api", env, ["api"]).start()
    worker = Container(image, "worker", env, ["worker"]).start()
    try:
        got = await _deliver_one(port, tenant["api_key"], host_sandbox)
        assert len(got["messages"]) == 1, got
        assert _healthcheck(api) == 0, api.logs()
        assert worker.stop() == 0, worker.logs()
        assert api.stop() == 0, api.logs()
    finally:
        api.remove()
        worker.remove()
