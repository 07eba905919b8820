"""Child processes that ``homing run`` and ``homing api`` start on PostgreSQL.

One event loop serving both the API and the deliveries lets a burst of requests
starve the deliveries (and the other way round), and one Python process uses one core.
On PostgreSQL, where any number of processes may share the queue, ``homing run``
therefore serves the API itself and delivers in ``homing worker`` child processes, one
per two cores by default (``HOMING_RUN_WORKER_PROCESSES``); and both ``homing run`` and
``homing api`` may serve the API from more processes on the same port
(``HOMING_API_PROCESSES``, ``homing.cli.runner``). A child that dies is started again;
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

from prometheus_client import multiprocess

log = logging.getLogger("homing.supervisor")

RESTART_DELAY_SECONDS = 1.0
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
STOP_GRACE_SECONDS = 30.0


async def _readiness(fd: int, timeout: float) -> bool:
    """Whether the child holding the other end of pipe ``fd`` writes to it in time
    (EOF: it exited first). Closes ``fd``."""
    loop = asyncio.get_running_loop()
    said: asyncio.Future[bool] = loop.create_future()

    def readable() -> None:
        if not said.done():
            said.set_result(bool(os.read(fd, 1)))

    loop.add_reader(fd, readable)
    try:
        return await asyncio.wait_for(said, timeout)
    except TimeoutError:
        return False
    finally:
        loop.remove_reader(fd)
        os.close(fd)


def default_worker_processes(cpu_count: int | None = None) -> int:
    """One worker process per two cores, at least one."""
    return max(1, (cpu_count or os.cpu_count() or 2) // 2)


class ChildProcesses:
    """``count`` processes of ``homing COMMAND…``, kept running until ``stop``.

    With ``ready_timeout``, each is started with ``--ready-fd N`` (the write end of a
    pipe) and ``start`` waits, up to that long, until every one has written to it.
    """

    def __init__(
        self,
        role: str,
        command: Sequence[str],
        count: int,
        env: Mapping[str, str] | None = None,
        *,
        ready_timeout: float | None = None,
    ) -> None:
        self._role = role
        self._command = list(command)
        self._count = count
        self._env = dict(os.environ if env is None else env)
        self._ready_timeout = ready_timeout
        self._procs: list[asyncio.subprocess.Process] = []
        self._watch: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs if p.returncode is None]

    async def start(self) -> None:
        """Start the children (and, with ``ready_timeout``, wait until they are ready)
        and a task that restarts any that exits."""
        pipes = [os.pipe() for _ in range(self._count)] if self._ready_timeout else []
        try:
            if pipes:
                self._procs = [await self._spawn(write) for _, write in pipes]
            else:
                self._procs = [await self._spawn() for _ in range(self._count)]
        finally:
            for _, write in pipes:
                os.close(write)
        if pipes and self._ready_timeout:
            waits = [_readiness(read, self._ready_timeout) for read, _ in pipes]
            if not all(await asyncio.gather(*waits)):
                log.warning(f"not every {self._role} process said it was ready in time")
        self._watch = asyncio.create_task(self._restart_dead())
        log.info(f"{self._role} processes started", extra={"pids": self.pids})

    async def _spawn(self, ready_fd: int | None = None) -> asyncio.subprocess.Process:
        ready = [] if ready_fd is None else ["--ready-fd", str(ready_fd)]
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "homing",
            *self._command,
            *ready,
            env=self._env,
            stdin=asyncio.subprocess.DEVNULL,
            pass_fds=() if ready_fd is None else (ready_fd,),
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
                    self._forget_metrics(proc.pid)
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
            self._forget_metrics(proc.pid)

    def _forget_metrics(self, pid: int) -> None:
        """A dead child's live gauges (its jobs in flight) leave the shared scrape; its
        counters stay, they happened (prometheus-client's multiprocess mode)."""
        directory = self._env.get(MULTIPROC_ENV)
        if directory:
            multiprocess.mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]
