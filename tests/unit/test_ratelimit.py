"""The rate limiter: moving windows in memory or Redis, and what happens when Redis fails."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from homing.clock import ManualClock
from homing.models import Priority
from homing.ratelimit import STORAGE_ERRORS, RateLimiter, memory_limiter, redis_limiter
from homing.timing.pacing import Pacer
from tests.admission_helpers import ThrowawayRedis, unique_prefix
from tests.conftest import REDIS_URL
from tests.processes import eventually, free_port


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def limiter(request: pytest.FixtureRequest) -> AsyncIterator[RateLimiter]:
    if request.param == "memory":
        built = memory_limiter()
    else:
        built = redis_limiter(REDIS_URL, key_prefix=unique_prefix(), timeout=1)
    try:
        yield built
    finally:
        await built.aclose()


def _errors(policy: str) -> float:
    return STORAGE_ERRORS.labels(policy=policy)._value.get()  # type: ignore[attr-defined,no-any-return]


async def test_hits_take_from_a_window_and_refuse_past_the_limit(limiter: RateLimiter) -> None:
    decisions = [await limiter.hit("k", 3, 60) for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    assert 59 <= decisions[-1].reset_in() <= 60
    peek = await limiter.peek("k", 3, 60)
    assert (peek.allowed, peek.remaining) == (False, 0)
    assert (await limiter.hit("other", 3, 60)).allowed


async def test_hits_at_once_are_admitted_in_arrival_order_up_to_the_limit(
    limiter: RateLimiter,
) -> None:
    decisions = await asyncio.gather(*(limiter.hit("k", 10, 60) for _ in range(25)))
    assert [d.allowed for d in decisions] == [True] * 10 + [False] * 15
    assert [d.remaining for d in decisions] == [*range(9, -1, -1), *[0] * 15]
    assert all(59 <= d.reset_in() <= 60 for d in decisions)


async def test_reservations_at_once_take_no_more_than_the_limit_and_forgiving_frees_one(
    limiter: RateLimiter,
) -> None:
    taken = await asyncio.gather(*(limiter.reserve("k", 5, 60) for _ in range(20)))
    allowed = [r for r in taken if r.decision.allowed]
    assert len(allowed) == 5 and all(r.name for r in allowed)
    assert not any(r.name for r in taken if not r.decision.allowed)
    assert (await limiter.peek("k", 5, 60)).remaining == 0
    await limiter.forgive(allowed[2])
    await limiter.forgive(allowed[2])  # once only: it is gone, the others stay
    assert (await limiter.peek("k", 5, 60)).remaining == 1
    for refused in (r for r in taken if not r.decision.allowed):
        await limiter.forgive(refused)  # took nothing, gives nothing back
    assert (await limiter.reserve("k", 5, 60)).decision.allowed
    assert not (await limiter.reserve("k", 5, 60)).decision.allowed
    assert not (await limiter.hit("k", 5, 60)).allowed  # one window for hits and reserves


async def test_a_forgiven_reservation_of_an_expired_window_leaves_the_new_one_alone() -> None:
    clock = ManualClock(5_000.0)
    limiter = memory_limiter(clock=clock)
    old = await limiter.reserve("k", 2, 60)
    clock.advance(61)
    fresh = [await limiter.reserve("k", 2, 60) for _ in range(2)]
    await limiter.forgive(old)
    assert all(r.decision.allowed for r in fresh)
    assert (await limiter.peek("k", 2, 60)).remaining == 0


async def test_an_unreachable_redis_reserves_by_the_policy_and_forgives_nothing() -> None:
    for policy, allowed in (("open", True), ("closed", False)):
        limiter = redis_limiter(
            f"redis://127.0.0.1:{free_port()}/0", key_prefix="x", timeout=0.5, on_error=policy
        )
        reservation = await limiter.reserve("k", 5, 60)
        assert reservation.decision.degraded and reservation.decision.allowed is allowed
        assert reservation.name == ""
        await limiter.forgive(reservation)
        await limiter.aclose()


@pytest.mark.redis
async def test_hits_on_one_redis_window_at_once_share_a_round_trip() -> None:
    limiter = redis_limiter(REDIS_URL, key_prefix=unique_prefix(), timeout=1)
    windows = limiter._windows
    calls: list[int] = []
    take = windows.take

    async def counted(key: str, limit: int, per_seconds: int, costs: Any) -> Any:
        calls.append(len(costs))
        return await take(key, limit, per_seconds, costs)

    windows.take = counted  # type: ignore[method-assign]
    try:
        first = await asyncio.gather(*(limiter.hit("k", 100, 60) for _ in range(50)))
        second = await asyncio.gather(*(limiter.hit("k", 100, 60) for _ in range(60)))
    finally:
        await limiter.aclose()
    assert sum(calls) == 110 and len(calls) <= 4, calls
    assert sum(d.allowed for d in first + second) == 100
    assert [d.remaining for d in first][-1] == 50


async def test_a_refused_key_is_admitted_again_when_its_oldest_hit_leaves_the_window(
    limiter: RateLimiter,
) -> None:
    first = time.monotonic()
    assert (await limiter.hit("k", 2, 1)).allowed
    assert (await limiter.hit("k", 2, 1)).allowed
    refused = await limiter.hit("k", 2, 1)
    assert not refused.allowed and refused.reset_in() == 1

    async def admitted() -> bool:
        return (await limiter.hit("k", 2, 1)).allowed

    await eventually(admitted, timeout=5, what="the window to move on")
    assert 0.9 <= time.monotonic() - first < 2.5


async def test_an_unreachable_redis_fails_open_logs_once_and_counts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limiter = redis_limiter(
        f"redis://127.0.0.1:{free_port()}/0", key_prefix="x", timeout=0.5, on_error="open"
    )
    before = _errors("open")
    with caplog.at_level(logging.WARNING, logger="homing.ratelimit"):
        decisions = [await limiter.hit("k", 1, 60) for _ in range(3)]
    await limiter.aclose()
    assert all(d.allowed and d.degraded for d in decisions)
    assert _errors("open") - before == 3
    assert [r.getMessage() for r in caplog.records] == [
        "rate-limit store unreachable; failing open"
    ]


async def test_an_unreachable_redis_fails_closed_when_so_configured() -> None:
    limiter = redis_limiter(
        f"redis://127.0.0.1:{free_port()}/0", key_prefix="x", timeout=0.5, on_error="closed"
    )
    before = _errors("closed")
    decision = await limiter.hit("k", 100, 60)
    peek = await limiter.peek("k", 100, 60)
    await limiter.aclose()
    assert not decision.allowed and decision.degraded and not peek.allowed
    assert _errors("closed") - before == 2


async def test_redis_coming_back_is_used_again(tmp_path: Path) -> None:
    server = await ThrowawayRedis(tmp_path).start()
    limiter = redis_limiter(server.url, key_prefix="x", timeout=0.5, on_error="closed")
    try:
        assert (await limiter.hit("k", 5, 60)).remaining == 4
        server.stop()
        assert (await limiter.hit("k", 5, 60)).degraded
        await server.start()

        async def shared_again() -> bool:
            return not (await limiter.hit("k", 5, 60)).degraded

        await eventually(shared_again, timeout=10, what="the limiter to use Redis again")
    finally:
        await limiter.aclose()
        server.stop()


async def test_memory_windows_and_their_answers_run_on_the_injected_clock() -> None:
    clock = ManualClock(5_000.0)
    limiter = memory_limiter(clock=clock)
    assert (await limiter.hit("k", 1, 60)).allowed
    refused = await limiter.hit("k", 1, 60)
    assert not refused.allowed
    assert refused.reset_at == 5_060.0
    assert refused.reset_in(now=clock.now()) == 60
    clock.advance(60)
    assert (await limiter.hit("k", 1, 60)).allowed


async def test_pacing_measures_the_wait_on_the_injected_clock() -> None:
    clock = ManualClock(5_000.0)
    pacer = Pacer(memory_limiter(clock=clock), clock, margin=0.0)
    rules = [{"scope": "account", "limit": 1, "per_seconds": 30}]
    # Pacing reads only the account's id and rules and the job's payload and priority.
    account: Any = SimpleNamespace(id="pa_1", config={"rate_rules": rules})
    job: Any = SimpleNamespace(payload={}, priority=Priority.NORMAL)
    assert await pacer.take(account, job) is None
    clock.advance(10)
    paced = await pacer.take(account, job)
    assert paced is not None and paced.wait == 20.0
