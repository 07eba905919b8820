"""A small pool of render worker processes, used from the event loop.

A thread cannot be stopped in Python, so a render runs in a separate process
(started with ``spawn``: no copy of the API's state, no inherited locks). Each
request has a deadline; past it the worker is killed with SIGKILL, the caller gets a
422 ``template_error`` and a fresh worker takes its place. The event loop never waits
on a render: the pipe is read by a thread of the pool's own (never one the loop's
other work may be holding) and awaited as a future. One request is one round trip on
the pipe. An idle worker goes to the waiting requests one tenant at a time, and no tenant
holds more than ``per_tenant`` workers (``homing.rendering.turns``).

Content being written (a template's or layout's version) is checked here too, not on
the event loop: compiling 64 KB of template and checking a 64 KB schema can take
seconds. A caller cancelled while its worker works (a preview whose client left) has
that worker killed and replaced, as a runaway's: the work stops with the request."""

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
    """``size`` workers, each limited to ``memory_bytes`` of address space; one
    tenant's requests hold at most ``per_tenant`` of them at once (0: all but one)."""

    def __init__(
        self,
        size: int = 2,
        memory_bytes: int = 512 * 1024 * 1024,
        limits: Limits | None = None,
        per_tenant: int = 0,
    ) -> None:
        self.size = size
        # The most workers one tenant's requests hold at once (0: all but one).
        self.per_tenant = min(size, per_tenant) if per_tenant > 0 else max(1, size - 1)
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
            idle: Turns[_Worker] = Turns(self.per_tenant)
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

    async def _replace(self, idle: Turns[_Worker], dead: _Worker, tenant: str) -> None:
        """Reap the killed ``dead`` and put a fresh worker in its place (off the loop),
        released by ``tenant``, whose request it was killed in."""
        await asyncio.to_thread(dead.process.join, 5)
        while True:
            try:
                idle.put(await asyncio.to_thread(self._spawn), tenant)
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
        limits = self.limits
        bounds = (limits.max_source_chars, limits.max_output_chars, limits.timeout_s)
        args = (version_id, parts, schema, data, channels, bounds, layout)
        result: dict[str, Any] = await self._ask("render", args, tenant, "did not render")
        return result

    async def check_version(
        self, parts: dict[str, Any], variables: dict[str, Any] | None, *, tenant: str
    ) -> None:
        """TemplateError unless a version of ``parts`` and ``variables`` would render
        (``kernel.check_version``), checked in a worker within the time budget."""
        limits = self.limits
        bounds = (limits.max_source_chars, limits.max_output_chars, limits.timeout_s)
        await self._ask("version", (parts, variables, bounds), tenant, "could not be checked")

    async def check_layout(self, html: str, max_chars: int, *, tenant: str) -> None:
        """TemplateError unless ``html`` makes a layout (``kernel.check_layout``),
        checked in a worker within the time budget."""
        await self._ask("layout", (html, max_chars), tenant, "could not be checked")

    async def _ask(self, kind: str, args: tuple[Any, ...], tenant: str, doing: str) -> Any:
        """One round trip with a worker, ``tenant``'s turn at one, within the time budget.
        A worker past the budget, or whose caller was cancelled (its HTTP request was
        abandoned) while it works, is killed and replaced."""
        if self._idle is None:
            await self.start()
        assert self._idle is not None and self._threads is not None
        idle, threads = self._idle, self._threads
        worker = await idle.get(tenant)
        budget = self.limits.timeout_s
        healthy = False
        try:
            trip = asyncio.get_running_loop().run_in_executor(
                threads, _round_trip, worker.conn, (kind, args)
            )
            answer = await asyncio.wait_for(trip, budget)
            healthy = True
        except TimeoutError:
            raise TemplateError(
                f"the template {doing} within {budget:g} s", {"budget_s": budget}
            ) from None
        except (EOFError, OSError):
            raise TemplateError("the template could not be rendered (the worker stopped)") from None
        finally:
            if healthy:
                idle.put(worker, tenant)
            else:
                # SIGKILL now (the runaway render really stops); the replacement starts
                # in the background so this answer is not delayed by its imports. The
                # tenant holds the slot until the replacement is up.
                self._kill(worker)
                task = asyncio.get_running_loop().create_task(self._replace(idle, worker, tenant))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        if answer[0] == "ok":
            return answer[1]
        raise TemplateError(answer[1], answer[2] or None)


def pool_from(settings: Settings) -> RenderPool:
    """A pool sized and bounded by the HOMING_TEMPLATE_* settings (not started yet)."""
    return RenderPool(
        size=settings.templates.render_workers,
        memory_bytes=settings.templates.worker_memory_mb * 1024 * 1024,
        per_tenant=settings.templates.workers_per_tenant,
        limits=Limits(
            max_source_chars=settings.templates.max_source_chars,
            max_output_chars=settings.templates.max_rendered_chars,
            timeout_s=settings.templates.render_timeout_seconds,
        ),
    )


def _round_trip(conn: Connection, request: tuple[Any, ...]) -> Any:
    conn.send(request)
    return conn.recv()
