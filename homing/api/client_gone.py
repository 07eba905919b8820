"""Work that stops when its client does.

An HTTP request whose client disconnects is not cancelled by the server: its handler
runs on and its answer goes nowhere. For work that holds a shared resource for long (a
preview holds a render worker for up to the render budget), ``unless_gone`` races it
against the client's disconnect and cancels it when the client leaves first; the render
pool then drops the request from its queue, or kills the worker rendering it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TypeVar

from starlette.requests import Request
from starlette.types import Receive

__all__ = ["GONE_STATUS", "unless_gone"]

T = TypeVar("T")

# What is logged for a request whose client left before its answer (nginx's number);
# no client ever reads it.
GONE_STATUS = 499


async def unless_gone(request: Request, work: Awaitable[T]) -> T | None:
    """``work``'s result, or None when the client disconnected first (``work`` is then
    cancelled, and waited for). Only for a request whose body was read already: the
    next message of its ``receive`` is the disconnect."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnected(request.receive))
    try:
        await asyncio.wait((task, gone), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pending in (gone, task):
            if not pending.done():
                pending.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pending
    if task.cancelled():
        return None
    return task.result()


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
