"""Who gets the next idle render worker: waiting renders are served one tenant at a
time, round robin, so a tenant with a hundred renders queued (a batch, or a flood of
runaway templates each holding a worker for the whole budget) delays another tenant's
one render by at most one render per worker, not by its whole queue."""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from typing import Generic, TypeVar

W = TypeVar("W")


class Turns(Generic[W]):
    """Idle workers, and the renders waiting for one, queued per tenant."""

    def __init__(self) -> None:
        self._idle: deque[W] = deque()
        # tenant -> its waiting renders, oldest first; the first tenant is served next.
        self._waiting: OrderedDict[str, deque[asyncio.Future[W]]] = OrderedDict()

    @property
    def idle(self) -> int:
        return len(self._idle)

    def put(self, worker: W) -> None:
        """An idle worker: to the next tenant's oldest waiting render, or kept."""
        while self._waiting:
            tenant, queue = next(iter(self._waiting.items()))
            future = queue.popleft()
            # The tenant served goes to the back of the line (or leaves it).
            del self._waiting[tenant]
            if queue:
                self._waiting[tenant] = queue
            if not future.done():  # a waiter that gave up is passed over
                future.set_result(worker)
                return
        self._idle.append(worker)

    async def get(self, tenant: str) -> W:
        """An idle worker for one render of ``tenant``, waiting for its turn if none."""
        if self._idle and not self._waiting:
            return self._idle.popleft()
        future: asyncio.Future[W] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(tenant, deque()).append(future)
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.put(future.result())  # handed a worker as it gave up: pass it on
            else:
                future.cancel()
                self._forget(tenant, future)
            raise

    def _forget(self, tenant: str, future: asyncio.Future[W]) -> None:
        queue = self._waiting.get(tenant)
        if queue is None:
            return
        try:
            queue.remove(future)
        except ValueError:
            return
        if not queue:
            del self._waiting[tenant]
