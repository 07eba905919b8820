"""Real ``homing`` processes for console tests: ``homing user add`` run as a command,
and ``homing api`` processes on loopback, each waited on until it answers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from pathlib import Path

import httpx

from tests.console_helpers import PASSWORD
from tests.processes import HomingProcess, eventually, free_port

# Argon2 runs ~250 ms a check on an idle core and a loaded 2-core machine queues them.
SLOW = httpx.Timeout(120.0)


def user_add(env: dict[str, str], log_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``homing user add ARGS --password-stdin`` with ``PASSWORD`` on its stdin."""
    cli_env = HomingProcess([], env, log_dir / "cli.log").env
    return subprocess.run(
        [sys.executable, "-m", "homing", "user", "add", *args, "--password-stdin"],
        env=cli_env,
        input=PASSWORD + "\n",
        capture_output=True,
        text=True,
        check=False,
    )


async def _answering(url: str) -> bool:
    try:
        async with httpx.AsyncClient(base_url=url) as probe:
            return (await probe.get("/healthz")).status_code == 200
    except httpx.TransportError:
        return False


@asynccontextmanager
async def api_processes(
    env: dict[str, str], log_dir: Path, count: int = 1
) -> AsyncIterator[list[str]]:
    """``count`` ``homing api`` processes on ``env`` (each on a port of its own, started
    one after the other so that one migrates first); their base URLs. Each is stopped
    after, and checked to exit 0."""
    async with AsyncExitStack() as stack:
        urls = []
        for n in range(count):
            port = free_port()
            args = ["api", "--host", "127.0.0.1", "--port", str(port)]
            process = HomingProcess(args, env, log_dir / f"api{n}.log").start()
            stack.callback(_stopped, process)
            url = f"http://127.0.0.1:{port}"
            await eventually(partial(_answering, url), 60, f"homing api {n} to answer")
            urls.append(url)
        yield urls


def _stopped(process: HomingProcess) -> None:
    assert process.stop() == 0, process.output()
