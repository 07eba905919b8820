"""Wake idle workers when work arrives, with polling as the fallback.

In one process (the embedded default) the API calls ``notify()`` after it commits.
"""

from __future__ import annotations

import asyncio
import contextlib


class Wakeup:
    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()

    async def wait(self, timeout: float) -> bool:
        """True when notified, False when the timeout passed first."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._event.wait()
        notified = self._event.is_set()
        self._event.clear()
        return notified
