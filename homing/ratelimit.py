"""Rate limits over a moving window, shared through Redis or held in process memory.

A moving window admits at most ``limit`` requests in any ``per_seconds`` span, and a
``Retry-After`` is exactly when the oldest request in the window leaves it. With
``HOMING_REDIS_URL`` the windows live in Redis and every process shares them; without it
they live in this process's memory, which is right for one process. Admission
(per-tenant request rates) and provider pacing use the same ``RateLimiter``, with their
own keys.

In Redis a window is a sorted set of its requests by time, and a hit is one script
(one round trip, atomic): drop what left the window, count, add when there is room,
answer allowed, used and the oldest request's time. It runs on Redis's clock, so
processes on hosts whose clocks differ still share one window.

Redis is never the source of truth: when it cannot be reached, the ``on_error`` policy
decides ("open" admits, "closed" refuses), every such decision is counted
(``homing_rate_limit_storage_errors_total``), and the outage is logged once when it
starts and once when it ends. After a failure Redis is left alone for ``cooldown``
seconds, so an outage costs no request a timeout.

``reserve`` takes one request that ``forgive`` may give back: a caller counts an
attempt before its outcome is known (a sign-in counts the password check before it
runs, and a right password gives its request back), so however many attempts arrive
at once, at most ``limit`` are let through a window. In memory a request is named by
its time (requests at one time are alike to the window); in Redis by a unique member
of the sorted set, added by the same script as a hit and removed with one ZREM.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar

import redis.asyncio as aioredis
from prometheus_client import Counter
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from homing.clock import Clock, SystemClock
from homing.errors import RateLimited, RateLimitUnavailable

__all__ = [
    "OnError",
    "RateDecision",
    "RateLimiter",
    "Reservation",
    "memory_limiter",
    "redis_limiter",
]

log = logging.getLogger("homing.ratelimit")

OnError = Literal["open", "closed"]
T = TypeVar("T")

# prometheus-client metrics are process-wide by design; this one is only ever incremented.
STORAGE_ERRORS = Counter(
    "homing_rate_limit_storage_errors_total",
    "Rate-limit decisions taken without the shared store because it was unreachable",
    ["policy"],
)

_STORE_FAILURES = (RedisError, OSError, TimeoutError)


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

    def enforce(self, window_seconds: int, counted: str = "requests", whose: str = "") -> None:
        """Raise RateLimited (RateLimitUnavailable when failing closed) if refused: "more
        than ``limit`` ``counted`` in ``window_seconds`` seconds``whose``; retry in …"."""
        if self.allowed:
            return
        if self.degraded:
            raise RateLimitUnavailable()
        retry_after = self.reset_in()
        raise RateLimited(
            f"more than {self.limit} {counted} in {window_seconds} seconds{whose}; "
            f"retry in {retry_after} s",
            {"limit": self.limit, "window_seconds": window_seconds, "retry_after": retry_after},
            retry_after=retry_after,
        )


@dataclass(frozen=True, slots=True)
class Reservation:
    """One request taken by ``RateLimiter.reserve``; ``name`` is empty when none was
    taken (refused, or decided without the store), so there is nothing to forgive."""

    decision: RateDecision
    key: str
    name: str

    def __repr__(self) -> str:
        return f"Reservation(allowed={self.decision.allowed}, taken={bool(self.name)})"


@dataclass(frozen=True, slots=True)
class _Window:
    """A window after one hit (or look): admitted?, requests in it, its oldest one's time."""

    allowed: bool
    used: int
    oldest: float | None
    now: float


class _Windows(Protocol):
    async def take(
        self, key: str, limit: int, per_seconds: float, costs: Sequence[int]
    ) -> list[_Window]:
        """Each of ``costs`` in turn: add that many requests when they fit (0: look)."""
        ...

    async def reserve(self, key: str, limit: int, per_seconds: float) -> tuple[_Window, str]:
        """Add one request when it fits, and its name ("" when it did not fit)."""
        ...

    async def forgive(self, key: str, name: str) -> None:
        """Remove the request ``name`` from ``key``'s window, if it is still there."""
        ...

    async def ping(self) -> bool:
        """Whether the store answers now (always, in memory)."""
        ...

    async def aclose(self) -> None: ...


_Group = tuple[str, int, float]  # key, limit, per_seconds


class RateLimiter:
    """``hit`` takes from a window, ``peek`` only looks; both answer with a RateDecision.

    On Redis, the hits on one window that arrive while an earlier call to Redis for it
    is under way go together in the next call, each answered in arrival order: under
    load a window costs a round trip per group of hits rather than per hit.
    """

    def __init__(
        self,
        windows: _Windows,
        *,
        clock: Clock | None = None,
        on_error: OnError = "open",
        cooldown: float = 1.0,
    ) -> None:
        self._windows = windows
        self._clock = clock or SystemClock()
        self._on_error = on_error
        self._cooldown = cooldown
        self._down_until = 0.0
        self._down = False
        self.shared = isinstance(windows, _RedisWindows)
        self._waiting: dict[_Group, list[tuple[int, asyncio.Future[RateDecision]]]] = {}
        self._flushing: set[_Group] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        where = "redis" if self.shared else "memory"
        return f"RateLimiter({where}, on_error={self._on_error!r})"

    async def hit(self, key: str, limit: int, per_seconds: float, cost: int = 1) -> RateDecision:
        """Take ``cost`` from ``key``'s window of ``limit`` per ``per_seconds``."""
        cost = max(1, cost)
        if not self.shared:
            return (await self._take((key, limit, per_seconds), [cost]))[0]
        answer: asyncio.Future[RateDecision] = asyncio.get_running_loop().create_future()
        group = (key, limit, per_seconds)
        self._waiting.setdefault(group, []).append((cost, answer))
        if group not in self._flushing:
            self._flushing.add(group)
            task = asyncio.create_task(self._flush(group))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await answer

    async def peek(self, key: str, limit: int, per_seconds: float) -> RateDecision:
        """What ``hit`` would see now, without taking anything."""
        return (await self._take((key, limit, per_seconds), [0]))[0]

    async def reserve(self, key: str, limit: int, per_seconds: float) -> Reservation:
        """Take one request from ``key``'s window, as ``hit`` does, in a way ``forgive``
        can undo: an attempt counted before its outcome is known."""
        taken = await self._guarded(lambda: self._windows.reserve(key, limit, per_seconds))
        if taken is None:
            return Reservation(self._degraded(limit, per_seconds), key, "")
        window, name = taken
        decision = _decision(window, 1, limit, per_seconds, self._clock.now())
        return Reservation(decision, key, name)

    async def forgive(self, reservation: Reservation) -> None:
        """Give back the request ``reservation`` took (nothing when it took none); the
        window then counts as if it had never been asked."""
        if reservation.name:
            name = reservation.name
            await self._guarded(lambda: self._windows.forgive(reservation.key, name))

    async def ping(self) -> bool:
        """Whether the shared store answers a PING within its timeout (``/readyz``);
        asked of the store itself, whatever the cooldown after a failure says."""
        return await self._windows.ping()

    async def aclose(self) -> None:
        await self._windows.aclose()

    async def _flush(self, group: _Group) -> None:
        """Send the hits waiting on ``group``'s window; those arriving meanwhile wait
        for this call to return and go in the next."""
        try:
            while waiting := self._waiting.pop(group, None):
                try:
                    decisions = await self._take(group, [cost for cost, _ in waiting])
                except asyncio.CancelledError:
                    for _, answer in waiting:
                        answer.cancel()
                    raise
                except Exception as exc:  # not the store failing (that is a decision)
                    for _, answer in waiting:
                        if not answer.done():
                            answer.set_exception(exc)
                    continue
                for (_, answer), decision in zip(waiting, decisions, strict=True):
                    if not answer.done():
                        answer.set_result(decision)
        finally:
            self._flushing.discard(group)

    async def _take(self, group: _Group, costs: list[int]) -> list[RateDecision]:
        key, limit, per_seconds = group
        windows = await self._guarded(lambda: self._windows.take(key, limit, per_seconds, costs))
        if windows is None:
            return [self._degraded(limit, per_seconds) for _ in costs]
        now = self._clock.now()
        return [
            _decision(w, cost, limit, per_seconds, now)
            for w, cost in zip(windows, costs, strict=True)
        ]

    async def _guarded(self, call: Callable[[], Awaitable[T]]) -> T | None:
        """What the store answers to ``call``; None when it is resting after a failure
        or fails now (noted, so the caller decides by the on-error policy)."""
        if self._resting():
            return None
        try:
            answer = await call()
        except _STORE_FAILURES as exc:
            self._failed(exc)
            return None
        self._recovered()
        return answer

    def _resting(self) -> bool:
        return self._down and time.monotonic() < self._down_until

    def _degraded(self, limit: int, per_seconds: float) -> RateDecision:
        STORAGE_ERRORS.labels(policy=self._on_error).inc()
        allowed = self._on_error == "open"
        return RateDecision(allowed, limit, limit, self._clock.now() + per_seconds, degraded=True)

    def _failed(self, exc: BaseException) -> None:
        if not self._down:
            log.warning(
                "rate-limit store unreachable; failing %s",
                self._on_error,
                extra={"error": type(exc).__name__, "policy": self._on_error},
            )
        self._down = True
        self._down_until = time.monotonic() + self._cooldown

    def _recovered(self) -> None:
        if self._down:
            self._down = False
            log.info("rate-limit store reachable again")


def _decision(
    window: _Window, cost: int, limit: int, per_seconds: float, now: float
) -> RateDecision:
    remaining = max(0, limit - window.used)
    allowed = window.allowed if cost else remaining > 0
    oldest = window.now if window.oldest is None else window.oldest
    # Reported on this host's clock (RateLimit-Reset is relative to now here).
    reset_at = now + max(0.0, oldest + per_seconds - window.now)
    return RateDecision(allowed, limit, remaining, reset_at)


# In-memory windows kept at most (least recently used evicted first), and how many
# takes pass between sweeps of the windows whose every request has left them.
MAX_MEMORY_WINDOWS = 100_000
SWEEP_EVERY = 10_000


@dataclass(slots=True)
class _Held:
    """One key's requests (monotonic times, oldest first) and its longest span."""

    span: float
    hits: deque[float] = field(default_factory=deque)


class _MemoryWindows:
    """Each key's requests in a deque, kept while any of them is inside the longest
    window the key was used with (a rule may span a day), for at most ``max_keys``
    keys: past that, the least recently used key is dropped, so memory is bounded.
    Times are the injected clock's, the one the limiter reports ``reset_at`` on."""

    def __init__(self, *, clock: Clock, max_keys: int = MAX_MEMORY_WINDOWS) -> None:
        self._windows: OrderedDict[str, _Held] = OrderedDict()
        self._max_keys = max_keys
        self._clock = clock
        self._takes = 0

    async def take(
        self, key: str, limit: int, per_seconds: float, costs: Sequence[int]
    ) -> list[_Window]:
        now = self._clock.now()
        hits = self._current(key, per_seconds, now)
        windows = []
        for cost in costs:
            allowed = cost > 0 and len(hits) + cost <= limit
            if allowed:
                hits.extend([now] * cost)
            windows.append(_Window(allowed, len(hits), hits[0] if hits else None, now))
        self._counted(now)
        return windows

    async def reserve(self, key: str, limit: int, per_seconds: float) -> tuple[_Window, str]:
        now = self._clock.now()
        hits = self._current(key, per_seconds, now)
        allowed = len(hits) < limit
        if allowed:
            hits.append(now)
        self._counted(now)
        name = repr(now) if allowed else ""
        return _Window(allowed, len(hits), hits[0] if hits else None, now), name

    async def forgive(self, key: str, name: str) -> None:
        held = self._windows.get(key)
        at = float(name)
        if held is not None and at in held.hits:
            held.hits.remove(at)

    def _current(self, key: str, per_seconds: float, now: float) -> deque[float]:
        """``key``'s requests still inside a window of ``per_seconds`` ending now."""
        hits = self._held(key, per_seconds).hits
        while hits and hits[0] <= now - per_seconds:
            hits.popleft()
        return hits

    def _counted(self, now: float) -> None:
        self._takes += 1
        if self._takes % SWEEP_EVERY == 0:
            self._forget_idle(now)

    def _held(self, key: str, per_seconds: float) -> _Held:
        held = self._windows.get(key)
        if held is None:
            held = self._windows[key] = _Held(float(per_seconds))
            while len(self._windows) > self._max_keys:
                self._windows.popitem(last=False)
        else:
            self._windows.move_to_end(key)
            held.span = max(held.span, per_seconds)
        return held

    def _forget_idle(self, now: float) -> None:
        """Drop keys none of whose requests is still inside its longest window."""
        idle = [k for k, h in self._windows.items() if not h.hits or h.hits[-1] <= now - h.span]
        for key in idle:
            del self._windows[key]

    async def ping(self) -> bool:
        return True

    async def aclose(self) -> None:
        self._windows.clear()


# KEYS[1]: the window. ARGV: per_seconds, limit, a unique token, then one cost per hit
# (0: look only); the requests of the hit whose cost is ARGV[j] are the members
# <token>:<j>:<1..cost>. Returns the oldest request's time (or ""), now, then for each hit
# allowed (0/1) and the requests in the window after it. Times as strings: a Lua number
# returned to Redis is cut to an integer.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local per_seconds = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - per_seconds)
local used = redis.call('ZCARD', KEYS[1])
local out = {'', string.format('%.6f', now)}
local added = false
for j = 4, #ARGV do
  local cost = tonumber(ARGV[j])
  local allowed = 0
  if cost > 0 and used + cost <= limit then
    allowed = 1
    for i = 1, cost do
      redis.call('ZADD', KEYS[1], now, ARGV[3] .. ':' .. j .. ':' .. i)
    end
    used = used + cost
    added = true
  end
  out[#out + 1] = allowed
  out[#out + 1] = used
end
if added then
  redis.call('PEXPIRE', KEYS[1], math.ceil(per_seconds * 1000))
end
out[1] = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2] or ''
return out
"""


class _RedisWindows:
    def __init__(self, client: aioredis.Redis, key_prefix: str, timeout: float) -> None:
        self._client = client
        self._timeout = timeout
        self._prefix = f"{key_prefix}:ratelimit:"
        self._script = client.register_script(_TAKE)
        self._token = os.urandom(6).hex()
        self._calls = 0

    async def take(
        self, key: str, limit: int, per_seconds: float, costs: Sequence[int]
    ) -> list[_Window]:
        return await self._run(key, limit, per_seconds, self._next_token(), costs)

    async def reserve(self, key: str, limit: int, per_seconds: float) -> tuple[_Window, str]:
        token = self._next_token()
        (window,) = await self._run(key, limit, per_seconds, token, [1])
        # The one hit's cost is ARGV[4], so its one request is the member <token>:4:1.
        return window, f"{token}:4:1" if window.allowed else ""

    async def forgive(self, key: str, name: str) -> None:
        await self._client.zrem(self._prefix + key, name)

    def _next_token(self) -> str:
        self._calls += 1
        return f"{self._token}:{self._calls}"

    async def _run(
        self, key: str, limit: int, per_seconds: float, token: str, costs: Sequence[int]
    ) -> list[_Window]:
        args: list[str | int | float] = [per_seconds, limit, token, *costs]
        oldest_text, now_text, *pairs = await self._script(keys=[self._prefix + key], args=args)
        oldest = float(oldest_text) if oldest_text else None
        now = float(now_text)
        return [
            _Window(bool(pairs[i]), int(pairs[i + 1]), oldest, now) for i in range(0, len(pairs), 2)
        ]

    async def ping(self) -> bool:
        try:
            async with asyncio.timeout(self._timeout):
                return bool(await self._client.ping())
        except _STORE_FAILURES:
            return False

    async def aclose(self) -> None:
        await self._client.aclose()


def memory_limiter(
    *, max_keys: int = MAX_MEMORY_WINDOWS, clock: Clock | None = None
) -> RateLimiter:
    """Windows in this process's memory: right for one process. At most ``max_keys``
    windows are kept; ``clock`` (the services' clock, a ``ManualClock`` in tests) times
    the windows and the answers."""
    clock = clock or SystemClock()
    return RateLimiter(_MemoryWindows(max_keys=max_keys, clock=clock), clock=clock)


def redis_limiter(
    url: str,
    *,
    key_prefix: str,
    timeout: float,
    on_error: OnError = "open",
    clock: Clock | None = None,
) -> RateLimiter:
    """Windows in Redis, shared by every process using the same URL and ``key_prefix``.

    Commands time out after ``timeout`` seconds and are retried once at most (a pooled
    connection may be stale after a Redis restart), so an outage is noticed fast.
    """
    client = aioredis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 1),
    )
    # Windows run on Redis's clock; ``clock`` only places their answers in local time.
    return RateLimiter(_RedisWindows(client, key_prefix, timeout), clock=clock, on_error=on_error)
