"""A bulk redrive or purge of dead letters acts on those there when it starts, on SQLite
and PostgreSQL: a redriven job that fails again at once makes a new dead letter, which
the same call must not chase (it did, for as long as the worker kept failing the jobs:
``homing run`` dead-lettered two jobs 663 times in 27 s while one console redrive ran)."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import func, select

from homing.channels import Channel
from homing.domain.accepting import NewJob
from homing.domain.dead_letters import DeadLetterFilter
from homing.domain.queue import Failed
from homing.models import Priority, Queue
from homing.services import Services
from homing.store.tables.core import dead_letters
from tests.conftest import stored_tenant
from tests.store_helpers import claim

PAYLOAD = {"to": "a@example.com", "from": "b@example.com", "subject": "s", "text": "t"}


async def _dead_letter(services: Services, job_id: str | None, tenant_id: str) -> str:
    """Accept (or take the re-queued ``job_id``), claim and fail it for good."""
    if job_id is None:
        new = NewJob(
            tenant_id=tenant_id,
            channel=Channel.EMAIL,
            queue=Queue.EMAIL,
            priority=Priority.NORMAL,
            payload=dict(PAYLOAD),
        )
        job_id = (await services.jobs.accept(new)).job.id
    [claimed] = await claim(services.queue, Queue.EMAIL, 1, 30)
    assert claimed.job.id == job_id
    failed = Failed(
        job_id=job_id,
        claim_token=claimed.claim_token,
        attempts=(),
        passes_made=1,
        error="bad address",
        error_class="message_permanent",
    )
    await services.queue.apply([failed])
    return job_id


async def _letters(services: Services) -> int:
    async with services.db.transaction() as conn:
        return int(await conn.scalar(select(func.count()).select_from(dead_letters)) or 0)


async def test_a_redrive_does_not_chase_the_dead_letters_its_own_jobs_make(
    services: Services,
) -> None:
    tenant_id = await stored_tenant(services)
    jobs = [await _dead_letter(services, None, tenant_id) for _ in range(2)]
    retry = services.jobs.retry

    async def retry_and_fail_again(*args: Any, **kwargs: Any) -> Any:
        job = await retry(*args, **kwargs)
        await _dead_letter(services, job.id, tenant_id)  # the worker, at once
        return job

    services.jobs.retry = retry_and_fail_again  # type: ignore[method-assign]
    manager = services.dead_letters
    everything = DeadLetterFilter(tenant_id=tenant_id)
    result = await asyncio.wait_for(manager.redrive(everything, None, dry_run=False), 20)
    assert (result.matched, result.done) == (2, 2)
    assert await _letters(services) == 4  # the two first, and one new each

    purged = await asyncio.wait_for(manager.purge(everything, None, dry_run=False), 20)
    assert purged.done == 4 and await _letters(services) == 0
    assert len(jobs) == 2
