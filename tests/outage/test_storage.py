"""The SQLite disk full or read-only, for real: a tiny tmpfs of the test's own.

A full disk answers sends with 503 ``storage_full`` (not the generic ``unavailable``),
``/readyz`` says not ready naming it, and the log has a warning naming it; ``homing
run`` on a read-only folder exits 2 with one line saying so, and so does a start that
cannot write its master key file there. The mounts need root, as
CI has: a test that cannot mount fails, it does not skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.cli import main
from homing.models import Plan
from homing.services import build
from homing.settings import Settings
from tests.conftest import stored_provider
from tests.fixtures import settings_for, sqlite_url
from tests.processes import HomingProcess, eventually, free_port, healthy, process_env

EMAIL = {"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"}


def _mount(*argv: str) -> None:
    done = subprocess.run(["mount", *argv], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"mount {' '.join(argv)} failed (root needed): {done.stderr}"


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs, unmounted after the test (lazily: a killed process may hold it)."""
    folder = tmp_path / "disk"
    folder.mkdir()
    _mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder))
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


@pytest.fixture
def settings(disk: Path, secret_key: str) -> Settings:
    return settings_for(sqlite_url(disk), disk, secret_key, data_dir=disk)


async def _tenant_key(settings: Settings, template: Path) -> str:
    """The migrated database (a copy of the template) on the tmpfs; a tenant with a
    provider; its API key."""
    shutil.copyfile(template, settings.data_dir / template.name)
    services = await build(settings, run_migrations=False)
    try:
        tenant, key = await services.tenants.create("disk", Plan.STARTUP)
        await stored_provider(services, tenant.id)
        return key
    finally:
        await services.aclose()


@pytest.fixture
async def homing(
    settings: Settings, secret_key: str, tmp_path: Path, sqlite_template: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, HomingProcess, str]]:
    key = await _tenant_key(settings, sqlite_template)
    port = free_port()
    env = process_env(settings, secret_key)
    proc = HomingProcess(["run", "--port", str(port)], env, tmp_path / "run.log").start()
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30
    ) as client:
        try:
            await eventually(lambda: healthy(client), timeout=60, what="homing run to start")
            yield client, proc, key
        finally:
            proc.kill()  # its shutdown on a full disk is not the subject


def _fill(folder: Path) -> None:
    """Write a file in ``folder`` until the disk refuses more."""
    with (folder / "filler").open("wb") as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        except OSError as exc:
            assert exc.errno == 28, exc  # ENOSPC


def _warnings(output: str) -> list[dict[str, Any]]:
    lines = (json.loads(line) for line in output.splitlines() if line.startswith("{"))
    return [line for line in lines if line.get("level") == "warning"]


async def test_a_full_disk_is_named_in_the_answer_readyz_and_the_log(
    homing: tuple[httpx.AsyncClient, HomingProcess, str], disk: Path
) -> None:
    client, proc, _ = homing
    assert (await client.post("/v1/notifications/email", json=EMAIL)).status_code == 202
    _fill(disk)
    codes = set()
    for _ in range(20):
        response = await client.post("/v1/notifications/email", json=EMAIL)
        if response.status_code != 202:
            assert response.status_code == 503, response.text
            codes.add(response.json()["error"]["code"])
    assert codes == {"storage_full"}
    ready = await client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["error"]["code"] == "storage_full"
    assert ready.json()["error"]["details"]["checks"]["database"] == "storage_full"

    async def warned_full() -> list[dict[str, Any]]:
        return [w for w in _warnings(proc.output()) if w.get("cause") == "storage_full"]

    warned = await eventually(warned_full, what="a warning naming the full disk")
    assert warned[0]["folder"] == str(disk), warned[0]
    assert (await client.get("/healthz")).status_code == 200  # alive: restarting frees nothing


async def test_homing_run_on_a_read_only_folder_says_so_in_one_line(
    settings: Settings, secret_key: str, disk: Path, sqlite_template: Path
) -> None:
    await _tenant_key(settings, sqlite_template)
    _mount("-o", "remount,ro", str(disk))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOMING_")}
    env.update(process_env(settings, secret_key))
    done = subprocess.run(
        [sys.executable, "-m", "homing", "run", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.startswith("homing: ")]
    assert "read-only" in line, done.stderr


def test_a_start_that_cannot_write_the_master_key_names_the_file_and_the_cause(
    disk: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _mount("-o", "remount,ro", str(disk))
    for name in ("HOMING_DATABASE_URL", "HOMING_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOMING_DATA_DIR", str(disk))  # SQLite: the key file goes here
    assert main(["migrate"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    key = disk / "secret.key"
    assert line == f"homing: cannot write {key}: Read-only file system (storage_read_only)"
