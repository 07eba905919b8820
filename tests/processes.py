"""Real Homing processes for tests: start, wait for a condition, kill."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx

from homing.settings import Settings
from homing.store.database import Database
from homing.store.migrate import schema_status

T = TypeVar("T")


def process_env(settings: Settings, secret_key: str, **extra: str) -> dict[str, str]:
    """The environment of a Homing process on the database of ``settings``, polling
    fast and allowed to call the sandbox on loopback; ``extra`` on top."""
    return {
        "HOMING_DATABASE_URL": settings.resolved_database_url,
        "HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "HOMING_DATA_DIR": str(settings.data_dir),
        "HOMING_SECRET_KEY": secret_key,
        "HOMING_POLL_INTERVAL_SECONDS": "0.05",
        **extra,
    }


def child_pids(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat_line = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat_line.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class HomingProcess:
    """``python -m homing ARGS`` with its own environment; stderr goes to a log file."""

    def __init__(self, args: list[str], env: dict[str, str], log_path: Path) -> None:
        self.args = args
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("HOMING_")}
        self.env.update(env)
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> HomingProcess:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "homing", *self.args],
            env=self.env,
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        return self

    def kill(self) -> None:
        """SIGKILL: no cleanup, no goodbye — as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL past 15 s; the exit code (None: never started)."""
        return stop_together([self])[0]

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def schema_is_current(database_url: str) -> bool:
    """Whether the database at ``database_url`` is migrated to this version's head (one
    read of ``alembic_version``, on a thread of its own: callers may be inside a loop).
    A SQLite file that does not exist yet is not current, and is left uncreated."""
    if database_url.startswith("sqlite") and not Path(database_url.split(":///", 1)[1]).exists():
        return False

    async def check() -> bool:
        db = Database(database_url)
        try:
            return await schema_status(db) == "current"
        finally:
            await db.dispose()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, check()).result()


def cli_tenant(
    env: dict[str, str], log_dir: Path, name: str = "acme", plan: str = "STARTUP"
) -> dict[str, Any]:
    """``homing tenant create`` run with ``env``: the new tenant's id and API key.
    ``homing tenant`` does not migrate by itself, so ``homing migrate`` runs first
    unless ``env``'s database is already current (the tests' databases are migrated
    copies: a process start saved)."""
    cli_env = HomingProcess([], env, log_dir / "cli.log").env
    url = cli_env.get("HOMING_DATABASE_URL")
    if url is None or not schema_is_current(url):
        subprocess.run(
            [sys.executable, "-m", "homing", "migrate"],
            env=cli_env,
            capture_output=True,
            check=True,
        )
    created = subprocess.run(
        [sys.executable, "-m", "homing", "tenant", "create", name, "--plan", plan],
        env=cli_env,
        capture_output=True,
        check=True,
        text=True,
    )
    tenant: dict[str, Any] = json.loads(created.stdout)
    return tenant


@contextmanager
def homing_workers(count: int, env: dict[str, str], log_dir: Path) -> Iterator[list[HomingProcess]]:
    """``count`` ``homing worker`` processes, each stopped (and checked to exit 0) after."""
    workers = [
        HomingProcess(["worker"], env, log_dir / f"worker{i}.log").start() for i in range(count)
    ]
    try:
        yield workers
    finally:
        # Every one stopped before any is judged: an assert at the first would leave the
        # others running, claiming from this test process's database for later tests.
        codes = stop_together(workers)
        for worker, code in zip(workers, codes, strict=True):
            assert code == 0, f"exit {code}: {worker.output()}"


def stop_together(processes: Sequence[HomingProcess], timeout: float = 15.0) -> list[int | None]:
    """Each of ``processes`` asked to stop at once (a graceful stop takes a while), each
    killed if still running ``timeout`` s after; their exit codes (None: never started).
    One SIGTERM each: a process that is stopping has restored the default action, so a
    second would end it with -15."""
    for process in processes:
        if process.proc is not None and process.proc.poll() is None:
            process.proc.send_signal(signal.SIGTERM)
    codes: list[int | None] = []
    for process in processes:
        if process.proc is None:
            codes.append(None)
            continue
        try:
            process.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.proc.kill()
            process.proc.wait(timeout=10)
        codes.append(process.proc.returncode)
    return codes


async def healthy(client: httpx.AsyncClient) -> bool:
    """Whether the Homing at ``client``'s base URL answers ``/healthz`` with 200 (False
    while nothing listens yet, or when one probe takes over 5 s)."""
    try:
        return (await client.get("/healthz", timeout=5)).status_code == 200
    except httpx.TransportError:
        return False


def wait_healthy(
    url: str,
    timeout: float = 60.0,
    what: str = "homing to answer",
    *,
    process: HomingProcess | None = None,
    path: str = "/healthz",
) -> None:
    """Poll ``url``'s ``path`` until it answers 200, or fail after ``timeout``, or at
    once when ``process`` (the one that should answer) has ended, with its output
    (synchronous: for fixtures wider than a test's event loop)."""
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=url, timeout=5) as client:
        while True:
            try:
                if client.get(path).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if process is not None:
                assert process.proc is not None and process.proc.poll() is None, process.output()
            if time.monotonic() > deadline:
                shown = f": {process.output()}" if process is not None else ""
                raise AssertionError(f"timed out after {timeout}s waiting for {what}{shown}")
            time.sleep(0.05)


async def eventually(
    check: Callable[[], Awaitable[T | None]], timeout: float = 20.0, what: str = "condition"
) -> T:
    """Poll ``check`` until it returns something truthy, or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        result = await check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.05)
