"""Calls whose outcome was never recorded: in the history as ``unknown``, and never a
second send of an ``at_most_once`` message (docs/reliability.md, "Calls whose outcome
was lost").

A claim the test takes and never answers stands for a worker that died after it
claimed (it may have called the vendor): the lease runs out and a worker claims the
job again. The process-level runs are tests/chaos/test_at_most_once_kills.py and
tests/outage/test_postgres_outage_outcomes.py.
"""

from __future__ import annotations

from sqlalchemy import select

from homing.clock import ManualClock, as_datetime
from homing.domain.queue import Completed
from homing.models import Attempt, AttemptOutcome, Queue
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.store.tables.core import dead_letters
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, job, register, send
from tests.store_helpers import claim

LEASE = 30.0


async def _lose_a_claim(services: Services, clock: ManualClock) -> str:
    """Claim the one queued job as a worker that then dies; its lease runs out."""
    (claimed,) = await claim(services.queue, Queue.EMAIL, 10, lease_seconds=LEASE)
    clock.advance(LEASE + 1)
    return claimed.claim_token


def _history(body: dict[str, object]) -> list[tuple[int, str]]:
    attempts = body["attempts"]
    assert isinstance(attempts, list)
    return [(a["number"], a["outcome"]) for a in attempts]


async def test_an_at_least_once_job_sent_again_shows_the_lost_call_as_unknown(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "sendgrid", 1)
    job_id = await send(tenant)
    await _lose_a_claim(services, clock)
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert _history(body) == [(1, "unknown"), (2, "success")]
    assert len(await sb.messages("sendgrid")) == 1


async def test_an_at_most_once_job_is_not_sent_after_a_lost_claim_and_a_late_success_wins(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "sendgrid", 1)
    job_id = await send(tenant, delivery="at_most_once")
    token = await _lose_a_claim(services, clock)
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert (body["status"], body["error_class"]) == ("FAILED", "uncertain")
    assert _history(body) == [(1, "unknown")]
    assert await sb.messages("sendgrid") == [], "the fence made no call"
    # Before a redrive, the operator is told that it may send a second copy.
    dry = await tenant.post("/v1/dead-letters/redrive", json={"all": True, "dry_run": True})
    assert dry.json() == {"matched": 1, "redriven": 0, "refused": 0, "uncertain": 1}
    # The lost claim's worker was alive after all (a database outage longer than the
    # lease): its success, recorded late, is a fact and wins over the fence.
    success = Attempt(
        job_id=job_id,
        tenant_id=tenant.tenant_id,
        number=1,
        provider_account_id=None,
        provider="sendgrid",
        outcome=AttemptOutcome.SUCCESS,
        status_code=202,
        error=None,
        started_at=as_datetime(clock.now()),
        duration_ms=5,
    )
    late = Completed(
        job_id=job_id,
        claim_token=token,
        attempts=(success,),
        provider="sendgrid",
        provider_message_id="late",
        passes_made=1,
    )
    await services.queue.apply([late])
    body = await job(tenant, job_id)
    assert (body["status"], body["error_class"]) == ("COMPLETED", None)
    assert _history(body) == [(1, "success")]
    async with services.db.transaction() as conn:
        letters = (await conn.execute(select(dead_letters.c.id))).all()
    assert letters == []
