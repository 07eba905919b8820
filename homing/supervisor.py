"""Child processes that ``homing run`` and ``homing api`` start on PostgreSQL.

One event loop serving both the API and the deliveries lets a burst of requests
starve the deliveries (and the other way round), and one Python process uses one core.
On PostgreSQL, where any number of processes may share the queue, ``homing run``
therefore serves the API itself and delivers in ``homing worker`` child processes, one
per two cores by default (``HOMING_RUN_WORKER_PROCESSES``); and both ``homing run`` and
``homing api`` may serve the API from more processes on the same port
(``HOMING_API_PROCESSES``, ``homing.runner``). A child that dies is started again;
stopping the parent stops them all (SIGTERM, then SIGKILL after a grace period). On
SQLite everything stays in the one process: the embedded database has one writer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Mapping, Sequence

log = logging.getLogger("homing.supervisor")

RESTART_DELAY_SECONDS = 1.0
STOP_GRACE_SECONDS = 30.0


def default_worker_processes(cpu_count: int | None = None) -> int:
    """One worker process per two cores, at least one."""
    return max(1, (cpu_count or os.cpu_count() or 2) // 2)


class ChildProcesses:
    """``count`` processes of ``homing COMMAND…``, kept running until ``stop``."""

    def __init__(
        self, role: str, command: Sequence[str], count: int, env: Mapping[str, str] | None = None
    ) -> None:
        self._role = role
        self._command = list(command)
        self._count = count
        self._env = dict(os.environ if env is None else env)
        self._procs: list[asyncio.subprocess.Process] = []
        self._watch: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs if p.returncode is None]

    async def start(self) -> None:
        """Start the children and a task that restarts any that exits."""
        self._procs = [await self._spawn() for _ in range(self._count)]
        self._watch = asyncio.create_task(self._restart_dead())
        log.info(f"{self._role} processes started", extra={"pids": self.pids})

    async def _spawn(self) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "homing",
            *self._command,
            env=self._env,
            stdin=asyncio.subprocess.DEVNULL,
        )

    async def _restart_dead(self) -> None:
        while not self._stopping:
            await asyncio.sleep(RESTART_DELAY_SECONDS)
            for index, proc in enumerate(self._procs):
                if proc.returncode is not None and not self._stopping:
                    log.error(
                        f"{self._role} process exited; starting another",
                        extra={"pid": proc.pid, "returncode": proc.returncode},
                    )
                    self._procs[index] = await self._spawn()

    async def stop(self) -> None:
        """SIGTERM every child, wait for them to record their outcomes, then SIGKILL."""
        self._stopping = True
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        for proc in self._procs:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
        for proc in self._procs:
            try:
                await asyncio.wait_for(proc.wait(), STOP_GRACE_SECONDS)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
