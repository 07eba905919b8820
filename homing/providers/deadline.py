"""One total deadline per provider or webhook call.

The HTTP clients and the mail client time each phase (connect, each read), so a peer
that answers one byte at a time never trips them. ``within`` bounds the whole call:
connect, send, and reading the answer. Each path applies it in one place: the pass
for sends (``homing.dispatch.passes``), the registration manager for credential checks
(``homing.managers.accounts``), the domains manager for domain calls
(``homing.managers.sending_domains``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["DEFAULT_DEADLINE_SECONDS", "DeadlineExceeded", "within"]

T = TypeVar("T")

# HOMING_PROVIDER_DEADLINE_SECONDS' default.
DEFAULT_DEADLINE_SECONDS = 30.0


class DeadlineExceeded(Exception):
    """The call did not finish within its deadline; it has been cancelled."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no answer within the {seconds:g} s call deadline")
        self.seconds = seconds


async def within(seconds: float, call: Awaitable[T]) -> T:
    """Await ``call``, cancelling it after ``seconds``: then ``DeadlineExceeded``.

    A ``TimeoutError`` the call raises by itself passes through unchanged; only this
    deadline's own expiry becomes ``DeadlineExceeded``.
    """
    scope = asyncio.timeout(seconds)
    try:
        async with scope:
            return await call
    except TimeoutError:
        if scope.expired():
            raise DeadlineExceeded(seconds) from None
        raise
