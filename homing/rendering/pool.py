"""A small pool of render worker processes, used from the event loop.

A thread cannot be stopped in Python, so a render runs in a separate process
(started with ``spawn``: no copy of the API's state, no inherited locks). Each
request has a deadline; past it the worker is killed with SIGKILL, the caller gets a
422 ``template_error`` and a fresh worker takes its place. The event loop never waits
on a render: the pipe is read by a thread of the pool's own (never one the loop's
other work may be holding) and awaited as a future. One request is one round trip on
the pipe. An idle worker goes to the waiting renders one tenant at a time
(``homing.rendering.turns``)."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from homing.rendering.kernel import Limits, TemplateError
from homing.rendering.render_worker import serve
from homing.rendering.turns import Turns
from homing.settings import Settings


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection


class RenderPool:
    """``size`` workers, each limited to ``memory_bytes`` of address space."""

    def __init__(
        self, size: int = 2, memory_bytes: int = 512 * 1024 * 1024, limits: Limits | None = None
    ) -> None:
        self.size = size
        self.memory_bytes = memory_bytes
        self.limits = limits or Limits()
        self._ctx = multiprocessing.get_context("spawn")
        self._idle: Turns[_Worker] | None = None
        # Threads of its own read the pipes: a round trip never waits for a thread.
        self._threads: ThreadPoolExecutor | None = None
        self._all: list[_Worker] = []
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self.replaced = 0  # workers killed and replaced (a runaway render, or a crash)

    def _spawn(self) -> _Worker:
        parent, child = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(
            target=serve, args=(child, self.memory_bytes), daemon=True, name="homing-render"
        )
        process.start()
        child.close()
        # Ready once its imports are done, so its first render is not charged for them.
        if not parent.poll(60) or parent.recv() != ("ready",):
            process.kill()
            raise TemplateError("the render worker did not start")
        worker = _Worker(process, parent)
        self._all.append(worker)
        return worker

    async def start(self) -> None:
        async with self._lock:
            if self._idle is not None:
                return
            # Twice the workers: a killed worker's reader may still be ending as its successor
            # starts.
            self._threads = ThreadPoolExecutor(2 * self.size, thread_name_prefix="homing-render")
            idle: Turns[_Worker] = Turns()
            for _ in range(self.size):
                idle.put(await asyncio.to_thread(self._spawn))
            self._idle = idle

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for worker in self._all:
            with contextlib.suppress(OSError):
                worker.conn.close()
            worker.process.kill()
            await asyncio.to_thread(worker.process.join, 5)
        self._all.clear()
        self._idle = None
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
            self._threads = None

    async def _replace(self, idle: Turns[_Worker], dead: _Worker) -> None:
        """Reap the killed ``dead`` and put a fresh worker in its place (off the loop)."""
        await asyncio.to_thread(dead.process.join, 5)
        while True:
            try:
                idle.put(await asyncio.to_thread(self._spawn))
                return
            except TemplateError:
                await asyncio.sleep(1)

    def _kill(self, worker: _Worker) -> None:
        """SIGKILL ``worker`` (it may be in the middle of a render); no waiting here."""
        with contextlib.suppress(Exception):
            worker.process.kill()
        with contextlib.suppress(OSError):
            worker.conn.close()
        if worker in self._all:
            self._all.remove(worker)
        self.replaced += 1

    async def render(
        self,
        version_id: str | None,
        parts: dict[str, Any],
        schema: dict[str, Any] | None,
        data: dict[str, Any],
        channels: list[str] | None = None,
        layout: tuple[str, str] | None = None,
        *,
        tenant: str = "",
    ) -> dict[str, Any]:
        """The rendered parts, or TemplateError (a 422) within the time budget: one
        round trip renders the email's HTML and its ``layout`` (cache key, HTML) too.
        ``tenant``: whose render this is, for its turn at a worker."""
        if self._idle is None:
            await self.start()
        assert self._idle is not None and self._threads is not None
        idle, threads = self._idle, self._threads
        worker = await idle.get(tenant)
        limits = self.limits
        request = (
            version_id,
            parts,
            schema,
            data,
            channels,
            (limits.max_source_chars, limits.max_output_chars, limits.timeout_s),
            layout,
        )
        healthy = False
        try:
            trip = asyncio.get_running_loop().run_in_executor(
                threads, _round_trip, worker.conn, request
            )
            answer = await asyncio.wait_for(trip, limits.timeout_s)
            healthy = True
        except TimeoutError:
            raise TemplateError(
                f"the template did not render within {limits.timeout_s:g} s",
                {"budget_s": limits.timeout_s},
            ) from None
        except (EOFError, OSError):
            raise TemplateError("the template could not be rendered (the worker stopped)") from None
        finally:
            if healthy:
                idle.put(worker)
            else:
                # SIGKILL now (the runaway render really stops); the replacement starts
                # in the background so this answer is not delayed by its imports.
                self._kill(worker)
                task = asyncio.get_running_loop().create_task(self._replace(idle, worker))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        if answer[0] == "ok":
            result: dict[str, Any] = answer[1]
            return result
        raise TemplateError(answer[1], answer[2] or None)


def pool_from(settings: Settings) -> RenderPool:
    """A pool sized and bounded by the HOMING_TEMPLATE_* settings (not started yet)."""
    return RenderPool(
        size=settings.templates.render_workers,
        memory_bytes=settings.templates.worker_memory_mb * 1024 * 1024,
        limits=Limits(
            max_source_chars=settings.templates.max_source_chars,
            max_output_chars=settings.templates.max_rendered_chars,
            timeout_s=settings.templates.render_timeout_seconds,
        ),
    )


def _round_trip(conn: Connection, request: tuple[Any, ...]) -> Any:
    conn.send(request)
    return conn.recv()
