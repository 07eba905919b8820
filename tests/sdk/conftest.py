"""A real ``homing run`` and a real sandbox (``homing sandbox``), both as processes, for
the Python SDK's tests. The SDK is imported from clients/python/src (pytest's
``pythonpath``): it is its own package, not installed in the project's environment."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from homing.sandbox.app import VENDOR_PREFIXES
from tests.processes import HomingProcess, free_port, wait_healthy

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
        sandbox_url = f"http://127.0.0.1:{sandbox_port}"
        wait_healthy(sandbox_url, what="the sandbox", process=sandbox, path="/_sandbox/messages")
        wait_healthy(f"http://127.0.0.1:{port}", what="homing run", process=run)
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
