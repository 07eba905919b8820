"""Factories the fixtures share: test settings, the sandbox's control API, a local server.

The fixtures themselves live in ``tests/conftest.py`` (and a directory's conftest where
only that directory needs one); they build what they yield with these, so a directory
that needs other settings overrides a field or two through ``settings_for`` instead of
copying the whole constructor.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import socket
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from homing.cli import main
from homing.crypto import generate_master_key
from homing.logs import configure_logging
from homing.sandbox.server import SandboxServer
from homing.settings import Settings, env_fields

LOOPBACK_NETWORKS = "127.0.0.0/8,::1/128"
# Short enough that a test waits little, long enough that a loaded CI box still answers.
TEST_SETTINGS: dict[str, Any] = {
    "provider_allowed_networks": LOOPBACK_NETWORKS,
    # The host in-process clients name (console_helpers.browser, conftest.api).
    # and the one Starlette's and Schemathesis's ASGI clients send by default.
    "allowed_hosts": "homing.test,testserver",
    "retry_base_seconds": 10,
    "max_attempts": 3,
    "lease_seconds": 30,
    "provider_timeout_seconds": 2,
    "alert_batch_seconds": 0,
    "poll_interval_seconds": 0.05,
    # Tests run on a ManualClock: a paced job is deferred at once rather than waiting.
    "pacing_wait_seconds": 0,
}
SERVER_STARTUP_SECONDS = 10.0


def homing_defaults(*names: str) -> dict[str, Any]:
    """Homing's own defaults for the fields ``names``: for a test that must not run on
    the short test timings (or the loopback allowance) of ``settings_for``."""
    fields = env_fields()
    return {name: fields[f"HOMING_{name.upper()}"].default for name in names}


# Homing's own retry, lease, timeout, alert and poll timing.
HOMING_TIMING = homing_defaults(*(name for name in TEST_SETTINGS if name.endswith("seconds")))
HOMING_TIMING.update(homing_defaults("max_attempts"))


def sqlite_url(directory: Path, name: str = "homing.db") -> str:
    """The URL of a SQLite database file in ``directory``."""
    return f"sqlite+aiosqlite:///{directory / name}"


def settings_for(database_url: str, tmp_path: Path, secret_key: Any, **overrides: Any) -> Settings:
    """Test settings on ``database_url``: data under ``tmp_path``, providers allowed on
    loopback, short retries and leases, alerts sent at once, no ``.env`` read.

    ``overrides`` replace or add fields (any ``Settings`` field, by name); the result is
    validated like any other ``Settings``.
    """
    values = {
        "database_url": database_url,
        "data_dir": tmp_path / "data",
        "secret_key": secret_key,
        **TEST_SETTINGS,
        **overrides,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


class Sandbox:
    """Test-side helper for the sandbox's control API."""

    def __init__(self, server: SandboxServer, http: httpx.AsyncClient) -> None:
        self.server = server
        self.http = http

    async def fault(self, provider: str, **rule: Any) -> None:
        response = await self.http.post("/_sandbox/faults", json={"provider": provider, **rule})
        response.raise_for_status()

    async def messages(self, provider: str | None = None) -> list[dict[str, Any]]:
        params = {"provider": provider} if provider else {}
        response = await self.http.get("/_sandbox/messages", params=params)
        response.raise_for_status()
        messages: list[dict[str, Any]] = response.json()
        return messages

    async def slack(self) -> list[dict[str, Any]]:
        response = await self.http.get("/_sandbox/slack")
        response.raise_for_status()
        received: list[dict[str, Any]] = response.json()
        return received


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        # The test runner owns the signals; uvicorn must not install its handlers.
        yield


@contextlib.asynccontextmanager
async def serving(app: Any, log_level: str | None = None) -> AsyncIterator[str]:
    """``app`` served by uvicorn on a free loopback port, for a client outside the
    process's ASGI transport (the sandbox posting events); yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    config = uvicorn.Config(app, log_config=None, log_level=log_level, lifespan="off", ws="none")
    server = _Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    deadline = asyncio.get_running_loop().time() + SERVER_STARTUP_SECONDS
    while not server.started:
        assert not task.done() and asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.005)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@contextlib.contextmanager
def captured_logs() -> Iterator[io.StringIO]:
    """Every log line (stdlib and structlog, at debug level) written to a buffer while
    the block runs; the root logger's handlers and level are put back after."""
    buffer = io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging("debug", buffer)
    try:
        yield buffer
    finally:
        root.handlers = handlers
        root.setLevel(level)


def migrated_cli_env(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    clear: tuple[str, ...] = (),
) -> None:
    """The environment of a ``homing`` command test: a migrated SQLite database of its
    own in ``tmp_path``, a fresh master key, quiet logs, and ``clear`` unset. Only
    migrate/run/api/worker migrate; the other commands need a current schema."""
    for name in ("HOMING_DATABASE_URL", "HOMING_REDIS_URL", *clear):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOMING_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}")
    monkeypatch.setenv("HOMING_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOMING_SECRET_KEY", generate_master_key())
    monkeypatch.setenv("HOMING_LOG_LEVEL", "error")
    assert main(["migrate"]) == 0
    capsys.readouterr()
