"""The Node.js BullMQ peer (``bench/peer/peer.mjs``) driven from Python.

Each run gets its own key prefix in a Redis database of its own (``HOMING_BENCH_PEER_REDIS_URL``,
default ``redis://127.0.0.1:6379/12``) and ``forget`` deletes every key under it.
``prepare`` installs the pinned packages with ``npm ci`` the first time.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import delete_redis_keys

PEER_DIR = Path(__file__).resolve().parent / "peer"
REDIS_URL = os.environ.get("HOMING_BENCH_PEER_REDIS_URL", "redis://127.0.0.1:6379/12")
API_KEY = "peer_bench_key"  # the key peer.mjs serve accepts
START_TIMEOUT_SECONDS = 60


class PeerUnavailable(RuntimeError):
    """The Node.js peer cannot run here."""


def unavailable() -> str | None:
    """Why the peer cannot run (no ``node``/``npm``), or None when it can."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not found on PATH" if missing else None


def prepare() -> None:
    """Install the peer's locked packages unless they are there; raise PeerUnavailable."""
    reason = unavailable()
    if reason:
        raise PeerUnavailable(reason)
    # Test workers may prepare at the same time; one installs, the others wait for it.
    with (Path(tempfile.gettempdir()) / "homing-bench-peer.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (PEER_DIR / "node_modules" / "bullmq" / "package.json").exists():
            return
        argv = ["npm", "ci", "--no-audit", "--no-fund"]
        done = subprocess.run(argv, cwd=PEER_DIR, capture_output=True, text=True)
    if done.returncode != 0:
        raise PeerUnavailable(f"npm ci failed: {done.stderr.strip()[-500:]}")


def version(package: str) -> str:
    manifest = PEER_DIR / "node_modules" / package / "package.json"
    return str(json.loads(manifest.read_text())["version"]) if manifest.exists() else "?"


@dataclass(frozen=True, slots=True)
class PeerQueue:
    """One BullMQ queue under a prefix of its own."""

    prefix: str = field(default_factory=lambda: f"homing-bench-{uuid.uuid4().hex[:12]}")
    redis_url: str = REDIS_URL
    name: str = "notifications-email"

    def args(self) -> list[str]:
        return ["--redis", self.redis_url, "--prefix", self.prefix, "--queue", self.name]


async def forget(queue: PeerQueue) -> int:
    """Delete every key of ``queue`` (its prefix); returns how many."""
    return await delete_redis_keys(queue.redis_url, queue.prefix)


def _command(verb: str, queue: PeerQueue, **options: object) -> list[str]:
    argv = ["node", str(PEER_DIR / "peer.mjs"), verb, *queue.args()]
    for name, value in options.items():
        if value is True:
            argv.append(f"--{name}")
        elif value not in (None, False):
            argv += [f"--{name}", str(value)]
    return argv


def _last_json(output: str) -> dict[str, Any]:
    lines = [line for line in output.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"the peer printed no result: {output[-500:]!r}")
    return dict(json.loads(lines[-1]))


def fill(queue: PeerQueue, jobs: int, mode: str = "seed", db: str | None = None) -> dict[str, Any]:
    """Put ``jobs`` jobs in the queue (seed options unless ``mode`` is bare/noop); with
    ``db``, a job row for each first, as the seed's API does."""
    done = subprocess.run(
        _command("fill", queue, jobs=jobs, mode=mode, db=db), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"peer fill failed: {done.stderr.strip()[-800:]}")
    return _last_json(done.stdout)


@dataclass
class PeerProcess:
    proc: subprocess.Popen[str]
    ready: dict[str, Any]
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait(self, timeout: float) -> dict[str, Any]:
        """Wait for the process to end by itself; its last JSON line is the result."""
        self.result = _last_json(_rest(self.proc, timeout))
        return self.result


def _rest(proc: subprocess.Popen[str], timeout: float) -> str:
    """What ``proc`` prints after its first line, once it has ended.

    Not ``communicate``: it reads the pipe's descriptor and so misses what ``readline``
    already buffered, which is the result itself when the peer finishes at once.
    The peer prints a few lines, far below a pipe's capacity, so waiting first is safe.
    """
    assert proc.stdout is not None
    proc.wait(timeout=timeout)
    with proc.stdout:
        return proc.stdout.read()


@contextmanager
def _running(argv: list[str]) -> Iterator[PeerProcess]:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    if not select.select([proc.stdout], [], [], START_TIMEOUT_SECONDS)[0]:
        proc.kill()
    first = proc.stdout.readline()  # {"event": "ready", ...}, or nothing if it died
    if not first.startswith("{"):
        _rest(proc, 30)
        raise RuntimeError(f"the peer did not start (exit {proc.returncode}): {argv[2]}")
    peer = PeerProcess(proc, json.loads(first))
    try:
        yield peer
    finally:
        if not peer.result:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            out = _rest(proc, 30)
            peer.result = _last_json(out) if "{" in out else {}


@contextmanager
def worker(
    queue: PeerQueue,
    mode: str,
    concurrency: int,
    target: str | None = None,
    db: str | None = None,
    jobs: int = 0,
) -> Iterator[PeerProcess]:
    """A BullMQ worker process (``seed``: POST + job row update; ``bare``: POST only;
    ``noop``: nothing). It stops after ``jobs`` completions if given, else on exit."""
    argv = _command(
        "work", queue, mode=mode, concurrency=concurrency, target=target, db=db, jobs=jobs or None
    )
    with _running(argv) as peer:
        yield peer


@contextmanager
def server(
    queue: PeerQueue, db: str, concurrency: int | None = None, target: str | None = None
) -> Iterator[PeerProcess]:
    """The seed's API on a free port (``peer.ready["port"]``); with ``concurrency``, its
    seed worker in the same process."""
    with_worker = concurrency is not None
    argv = _command(
        "serve", queue, db=db, worker=with_worker, concurrency=concurrency, target=target
    )
    with _running(argv) as peer:
        yield peer
