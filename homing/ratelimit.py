"""Rate limits over a moving window, shared through Redis or held in process memory.

Built on the ``limits`` library (its moving-window strategy, so a ``Retry-After`` is
exactly when the oldest request in the window leaves it). With ``HOMING_REDIS_URL`` the
windows live in Redis and every process shares them; without it they live in this
process's memory, which is right for one process. Admission (per-tenant request rates)
and provider pacing use the same ``RateLimiter``, with their own keys.

Redis is never the source of truth: when it cannot be reached, the ``on_error`` policy
decides ("open" admits, "closed" refuses), every such decision is counted
(``homing_rate_limit_storage_errors_total``), and the outage is logged once when it
starts and once when it ends. After a failure Redis is left alone for ``cooldown``
seconds, so an outage costs no request a timeout.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Literal

import redis.asyncio as aioredis
from limits import RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.errors import StorageError
from prometheus_client import Counter
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

__all__ = ["OnError", "RateDecision", "RateLimiter", "memory_limiter", "redis_limiter"]

log = logging.getLogger("homing.ratelimit")

OnError = Literal["open", "closed"]

# prometheus-client metrics are process-wide by design; this one is only ever incremented.
STORAGE_ERRORS = Counter(
    "homing_rate_limit_storage_errors_total",
    "Rate-limit decisions taken without the shared store because it was unreachable",
    ["policy"],
)

_STORE_FAILURES = (StorageError, RedisError, OSError, TimeoutError)


@dataclass(frozen=True, slots=True)
class RateDecision:
    """One rate-limit answer. ``reset_at`` (epoch seconds): when a slot frees up.

    ``degraded``: the store was unreachable and ``allowed`` is the on-error policy.
    """

    allowed: bool
    limit: int
    remaining: int
    reset_at: float
    degraded: bool = False

    def reset_in(self, now: float | None = None) -> int:
        """Whole seconds until ``reset_at`` (at least 1 when refused)."""
        seconds = math.ceil(max(0.0, self.reset_at - (time.time() if now is None else now)))
        return max(seconds, 0 if self.allowed else 1)


class RateLimiter:
    """``hit`` takes from a window, ``peek`` only looks; both answer with a RateDecision."""

    def __init__(
        self,
        storage: Storage,
        *,
        on_error: OnError = "open",
        cooldown: float = 1.0,
        pool: aioredis.ConnectionPool | None = None,
    ) -> None:
        self._strategy = MovingWindowRateLimiter(storage)
        self._on_error = on_error
        self._cooldown = cooldown
        self._pool = pool
        self._down_until = 0.0
        self._down = False
        self.shared = pool is not None

    def __repr__(self) -> str:
        where = "redis" if self.shared else "memory"
        return f"RateLimiter({where}, on_error={self._on_error!r})"

    async def hit(self, key: str, limit: int, per_seconds: int, cost: int = 1) -> RateDecision:
        """Take ``cost`` from ``key``'s window of ``limit`` per ``per_seconds``."""
        item = RateLimitItemPerSecond(limit, per_seconds)
        if self._resting():
            return self._degraded(limit, per_seconds)
        try:
            allowed = await self._strategy.hit(item, key, cost=cost)
            stats = await self._strategy.get_window_stats(item, key)
        except _STORE_FAILURES as exc:
            return self._failed(exc, limit, per_seconds)
        self._recovered()
        return RateDecision(allowed, limit, max(0, stats.remaining), stats.reset_time)

    async def peek(self, key: str, limit: int, per_seconds: int) -> RateDecision:
        """What ``hit`` would see now, without taking anything."""
        item = RateLimitItemPerSecond(limit, per_seconds)
        if self._resting():
            return self._degraded(limit, per_seconds)
        try:
            stats = await self._strategy.get_window_stats(item, key)
        except _STORE_FAILURES as exc:
            return self._failed(exc, limit, per_seconds)
        self._recovered()
        remaining = max(0, stats.remaining)
        return RateDecision(remaining > 0, limit, remaining, stats.reset_time)

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()

    def _resting(self) -> bool:
        return self._down and time.monotonic() < self._down_until

    def _degraded(self, limit: int, per_seconds: int) -> RateDecision:
        STORAGE_ERRORS.labels(policy=self._on_error).inc()
        allowed = self._on_error == "open"
        return RateDecision(allowed, limit, limit, time.time() + per_seconds, degraded=True)

    def _failed(self, exc: BaseException, limit: int, per_seconds: int) -> RateDecision:
        if not self._down:
            log.warning(
                "rate-limit store unreachable; failing %s",
                self._on_error,
                extra={"error": type(exc).__name__, "policy": self._on_error},
            )
        self._down = True
        self._down_until = time.monotonic() + self._cooldown
        return self._degraded(limit, per_seconds)

    def _recovered(self) -> None:
        if self._down:
            self._down = False
            log.info("rate-limit store reachable again")


def memory_limiter() -> RateLimiter:
    """Windows in this process's memory: right for one process."""
    return RateLimiter(MemoryStorage())


def redis_limiter(
    url: str, *, key_prefix: str, timeout: float, on_error: OnError = "open"
) -> RateLimiter:
    """Windows in Redis, shared by every process using the same URL and ``key_prefix``.

    Commands time out after ``timeout`` seconds and are retried once at most (a pooled
    connection may be stale after a Redis restart), so an outage is noticed fast.
    """
    pool = aioredis.ConnectionPool.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 1),
    )
    storage = RedisStorage(
        f"async+{url}",
        implementation="redispy",
        key_prefix=f"{key_prefix}:ratelimit",
        wrap_exceptions=True,
        connection_pool=pool,  # type: ignore[arg-type]
    )
    return RateLimiter(storage, on_error=on_error, pool=pool)
