"""A real ``homing run`` and a real sandbox (``homing sandbox``), both as processes, for
the Python SDK's tests. The SDK is imported from clients/python/src (pytest's
``pythonpath``): it is its own package, not installed in the project's environment."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from homing.sandbox.app import VENDOR_PREFIXES
from tests.processes import HomingProcess, free_port

ADMIN_TOKEN = "sdk-admin-" + secrets.token_hex(16)


@dataclass(frozen=True)
class Server:
    url: str
    sandbox_url: str
    api_key: str
    limited_key: str  # a tenant allowed one request a minute
    admin_token: str  # the operator's HOMING_ADMIN_TOKEN

    def sandbox_provider(self, vendor: str) -> str:
        return self.sandbox_url + VENDOR_PREFIXES[vendor]


def _wait_healthy(url: str, process: HomingProcess, path: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.proc is not None and process.proc.poll() is None, process.output()
        try:
            if httpx.get(url + path, timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} did not answer: {process.output()}")


def _tenant(env: dict[str, str], log: Path, name: str, *extra: str) -> str:
    cli_env = HomingProcess([], env, log).env
    created = subprocess.run(
        [sys.executable, "-m", "homing", "tenant", "create", name, "--plan", "STARTUP", *extra],
        env=cli_env,
        capture_output=True,
        check=True,
        text=True,
    )
    key: str = json.loads(created.stdout)["api_key"]
    return key


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("sdk")
    sandbox_port, port = free_port(), free_port()
    sandbox = HomingProcess(
        ["sandbox", "--port", str(sandbox_port), "--smtp-port", str(free_port())],
        {},
        folder / "sandbox.log",
    ).start()
    env = {
        "HOMING_DATA_DIR": str(folder / "data"),
        "HOMING_POLL_INTERVAL_SECONDS": "0.05",
        "HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "HOMING_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "HOMING_ADMIN_TOKEN": ADMIN_TOKEN,
    }
    subprocess.run(
        [sys.executable, "-m", "homing", "migrate"],
        env=HomingProcess([], env, folder / "cli.log").env,
        capture_output=True,
        check=True,
    )
    api_key = _tenant(env, folder / "cli.log", "sdk")
    limited_key = _tenant(env, folder / "cli.log", "limited", "--rate", "1")
    run = HomingProcess(["run", "--port", str(port)], env, folder / "run.log").start()
    try:
        _wait_healthy(f"http://127.0.0.1:{sandbox_port}", sandbox, "/_sandbox/messages")
        _wait_healthy(f"http://127.0.0.1:{port}", run, "/healthz")
        yield Server(
            f"http://127.0.0.1:{port}",
            f"http://127.0.0.1:{sandbox_port}",
            api_key,
            limited_key,
            ADMIN_TOKEN,
        )
    finally:
        assert run.stop() == 0, run.output()
        sandbox.stop()
