"""Property: whatever the interleaving, one key's jobs finish in acceptance order and
never two of them are in flight at once."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from homing.channels import Channel
from homing.clock import ManualClock
from homing.crypto import generate_master_key
from homing.domain.accepting import NewJob
from homing.domain.queue import Completed, Failed, Rescheduled
from homing.models import ClaimedJob, Plan, Priority, Queue
from homing.services import build
from tests import store_helpers
from tests.fixtures import HOMING_TIMING, settings_for, sqlite_url

KEYS = ["a", "b", None]
accept = st.tuples(st.just("accept"), st.sampled_from(KEYS))
claim = st.tuples(st.just("claim"), st.integers(min_value=1, max_value=4))
finish = st.tuples(
    st.just("finish"), st.sampled_from(["complete", "fail", "retry"]), st.integers(0, 3)
)
operations = st.lists(st.one_of(accept, claim, finish), min_size=1, max_size=40)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_keys_finish_in_order_and_one_at_a_time(ops: list[tuple[object, ...]]) -> None:
    asyncio.run(_check(ops))


async def _check(ops: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        clock = ManualClock()
        services = await build(
            settings_for(
                sqlite_url(Path(tmp), "h.db"), Path(tmp), generate_master_key(), **HOMING_TIMING
            ),
            clock=clock,
        )
        try:
            await _run(services, clock, ops)
        finally:
            await services.aclose()


async def _run(services: object, clock: ManualClock, ops: list[tuple[object, ...]]) -> None:
    from homing.services import Services

    assert isinstance(services, Services)
    tenant, _ = await services.tenants.create("t", Plan.STARTUP)
    accepted: dict[str, list[str]] = {"a": [], "b": []}
    finished: dict[str, list[str]] = {"a": [], "b": []}
    held: list[ClaimedJob] = []
    for op in ops:
        if op[0] == "accept":
            key = op[1]
            assert key is None or isinstance(key, str)
            payload = {"to": "x@example.com", "from": "y@example.com", "subject": "s"}
            new = NewJob(
                tenant_id=tenant.id,
                channel=Channel.EMAIL,
                queue=Queue.EMAIL,
                priority=Priority.NORMAL,
                payload=payload,
            )
            job = (await services.jobs.accept(_with_key(new, key))).job
            if key is not None:
                accepted[key].append(job.id)
        elif op[0] == "claim":
            assert isinstance(op[1], int)
            held += await store_helpers.claim(services.queue, Queue.EMAIL, op[1], 30)
            keys = [c.job.ordering_key for c in held if c.job.ordering_key]
            assert len(keys) == len(set(keys)), "two jobs of one key in flight"
        elif held:
            assert isinstance(op[2], int)
            item = held.pop(op[2] % len(held))
            await services.queue.apply([_outcome(str(op[1]), item, clock)])
            if op[1] != "retry" and item.job.ordering_key:
                finished[item.job.ordering_key].append(item.job.id)
        clock.advance(1)
    for key in ("a", "b"):
        assert finished[key] == accepted[key][: len(finished[key])]


def _with_key(new: NewJob, key: str | None) -> NewJob:
    from dataclasses import replace

    return replace(new, ordering_key=key)


def _outcome(kind: str, item: ClaimedJob, clock: ManualClock) -> object:
    if kind == "complete":
        return Completed(
            job_id=item.job.id,
            claim_token=item.claim_token,
            attempts=(),
            provider="resend",
            provider_message_id=None,
            passes_made=1,
        )
    if kind == "fail":
        return Failed(
            job_id=item.job.id,
            claim_token=item.claim_token,
            attempts=(),
            passes_made=1,
            error="x",
            error_class="transient",
        )
    return Rescheduled(
        job_id=item.job.id,
        claim_token=item.claim_token,
        attempts=(),
        available_at=clock.now(),
        passes_made=1,
        error="x",
        error_class="transient",
    )
