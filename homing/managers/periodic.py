"""The loop of every periodic pass beside the worker: retention, the reconciler and the
alert and notice checks (``homing.cli.runner`` starts them).

A pass every interval until ``stop`` is set; a failed pass is logged and the next one
tries again, so the loop outlives any one failure (a database down for a while, a bug
in one check), and setting ``stop`` ends the wait at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from homing.errors import StoreError


async def repeat(
    one_pass: Callable[[], Awaitable[object]],
    stop: asyncio.Event,
    interval_seconds: float,
    log: logging.Logger,
    what: str,
) -> None:
    """Run ``one_pass`` every ``interval_seconds`` until ``stop`` is set; a failure is
    logged as "``what`` failed" and does not end the loop."""
    while not stop.is_set():
        try:
            await one_pass()
        except StoreError as exc:
            log.warning(f"{what} failed", extra={"error": str(exc)})
        except Exception:  # the loop must outlive any one failed pass
            log.exception(f"{what} failed unexpectedly")
        try:
            await asyncio.wait_for(stop.wait(), interval_seconds)
        except TimeoutError:
            pass
