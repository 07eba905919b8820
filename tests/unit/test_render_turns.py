"""The render pool's turns: an idle worker goes to the waiting renders one tenant at a
time, so a tenant's long queue does not stand in front of another tenant's render."""

from __future__ import annotations

import asyncio

import pytest

from homing.rendering.turns import Turns


async def _waiting(turns: Turns[str], tenant: str) -> asyncio.Task[str]:
    task = asyncio.ensure_future(turns.get(tenant))
    await asyncio.sleep(0)  # queued
    return task


async def test_an_idle_worker_is_taken_at_once() -> None:
    turns: Turns[str] = Turns()
    turns.put("w1")
    assert await turns.get("a") == "w1"
    assert turns.idle == 0


async def test_waiting_renders_are_served_one_tenant_at_a_time() -> None:
    turns: Turns[str] = Turns()
    flood = [await _waiting(turns, "flooder") for _ in range(5)]
    small = await _waiting(turns, "small")
    for n in range(3):
        turns.put(f"w{n}")
    await asyncio.sleep(0)
    # FIFO would give all three to the flooder; the small tenant's turn comes second.
    assert small.result() == "w1"
    assert [t.result() for t in flood[:2]] == ["w0", "w2"]
    assert not any(t.done() for t in flood[2:])
    for task in flood[2:]:
        task.cancel()


async def test_a_render_that_gives_up_leaves_its_place_and_no_worker_behind() -> None:
    turns: Turns[str] = Turns()
    gone = await _waiting(turns, "a")
    kept = await _waiting(turns, "b")
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    turns.put("w1")
    assert await kept == "w1"
    turns.put("w2")
    assert turns.idle == 1


async def test_a_worker_handed_to_a_render_as_it_gives_up_goes_to_the_next() -> None:
    turns: Turns[str] = Turns()
    first = await _waiting(turns, "a")
    second = await _waiting(turns, "b")
    turns.put("w1")  # first's future holds w1 now, its task not yet resumed
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await second == "w1"


async def test_a_tenant_holds_at_most_its_share_and_a_killed_worker_counts_until_replaced() -> None:
    turns: Turns[str] = Turns(per_tenant=1)
    turns.put("w1")
    turns.put("w2")
    assert await turns.get("flooder") == "w1"
    # The flooder's second request waits although a worker is idle: it is the other's.
    waiting = await _waiting(turns, "flooder")
    assert not waiting.done() and turns.idle == 1
    assert await turns.get("small") == "w2"
    # w1 was killed in the flooder's request: its replacement, released by the flooder,
    # goes to the flooder's waiting request (it holds none until then).
    turns.put("w3", "flooder")
    assert await waiting == "w3"
    turns.put("w2", "small")
    assert turns.held("small") == 0 and turns.held("flooder") == 1 and turns.idle == 1
