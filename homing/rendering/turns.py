"""Who gets the next idle render worker: waiting requests are served one tenant at a
time, round robin, so a tenant with a hundred renders queued (a batch, or a flood of
runaway templates each holding a worker for the whole budget) delays another tenant's
one render by at most one render per worker, not by its whole queue.

And no tenant holds more than ``per_tenant`` workers at once (the pool sets it to all
but one): however many renders, previews and checks one tenant keeps running, another
tenant finds a worker that is not stuck on them. A worker killed in a tenant's request
stays counted against it until its replacement is up, so a tenant whose requests get
workers killed pays for their restarts, not the others."""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from typing import Generic, TypeVar

W = TypeVar("W")


class Turns(Generic[W]):
    """Idle workers, the requests waiting for one queued per tenant, and how many
    workers each tenant holds."""

    def __init__(self, per_tenant: int = 1_000_000) -> None:
        self.per_tenant = max(1, per_tenant)
        self._idle: deque[W] = deque()
        # tenant -> its waiting requests, oldest first; the first tenant is served next.
        self._waiting: OrderedDict[str, deque[asyncio.Future[W]]] = OrderedDict()
        self._held: dict[str, int] = {}

    @property
    def idle(self) -> int:
        return len(self._idle)

    def held(self, tenant: str) -> int:
        """How many workers ``tenant`` holds (a killed one until it is replaced)."""
        return self._held.get(tenant, 0)

    def put(self, worker: W, released: str | None = None) -> None:
        """An idle worker (given back by ``released``, or a new one): to the next tenant's
        oldest waiting request, or kept."""
        if released is not None:
            self._release(released)
        self._idle.append(worker)
        self._hand_out()

    def _hand_out(self) -> None:
        while self._idle:
            tenant = next((t for t in self._waiting if self.held(t) < self.per_tenant), None)
            if tenant is None:
                return
            queue = self._waiting.pop(tenant)
            future = queue.popleft()
            if queue:  # the tenant served goes to the back of the line (or leaves it)
                self._waiting[tenant] = queue
            if not future.done():  # a waiter that gave up is passed over
                self._hold(tenant)
                future.set_result(self._idle.popleft())

    async def get(self, tenant: str) -> W:
        """An idle worker for one request of ``tenant``, waiting for its turn if none
        is idle or the tenant holds its most; ``put(worker, tenant)`` gives it back."""
        # Nobody eligible is waiting whenever a worker is idle (``_hand_out``).
        if self._idle and tenant not in self._waiting and self.held(tenant) < self.per_tenant:
            self._hold(tenant)
            return self._idle.popleft()
        future: asyncio.Future[W] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(tenant, deque()).append(future)
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.put(future.result(), tenant)  # handed a worker as it gave up: pass it on
            else:
                future.cancel()
                self._forget(tenant, future)
            raise

    def _hold(self, tenant: str) -> None:
        self._held[tenant] = self._held.get(tenant, 0) + 1

    def _release(self, tenant: str) -> None:
        left = self._held.get(tenant, 0) - 1
        if left > 0:
            self._held[tenant] = left
        else:
            self._held.pop(tenant, None)

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
