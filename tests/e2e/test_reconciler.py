"""The reconciler on SQLite and PostgreSQL: the ledger invariant broken by hand in the
database three ways is found, counted on ``homing_unaccounted_jobs``, alerted through
the sandbox's Slack stand-in, and mended so that the jobs are delivered again."""

from __future__ import annotations

import asyncio
from typing import Any

from prometheus_client import REGISTRY
from sqlalchemy import delete, select, update

from homing.clock import ManualClock
from homing.managers.reconciler import ReconcilePolicy, Reconciler
from homing.metrics import UNACCOUNTED_JOBS as REGISTRY_GAUGE
from homing.models import JobStatus, Queue
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.store.ledger import JobBatch, LedgerStore
from homing.store.tables.core import jobs, queue_entries
from tests.conftest import TenantClient, disable_providers, stored_provider
from tests.e2e.conftest import SLACK_PATH, Sandbox, deliver, job, register, send
from tests.store_helpers import claim


def _gauge() -> float | None:
    return REGISTRY.get_sample_value("homing_unaccounted_jobs")


async def _entries(services: Services) -> dict[str, Any]:
    async with services.db.transaction() as conn:
        rows = (await conn.execute(select(queue_entries))).all()
    return {r.job_id: r for r in rows}


async def _break_three_ways(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> tuple[str, str, str]:
    """(job with no entry, finished job with an entry, PROCESSING job whose lease ran
    out long ago), each made by hand in the database."""
    stale = await send(tenant, subject="Stale")
    [claimed] = await claim(services.queue, Queue.EMAIL, 10, services.settings.worker.lease_seconds)
    assert claimed.job.id == stale
    clock.advance(
        services.settings.worker.lease_seconds + services.settings.reconcile.stale_lease_seconds + 1
    )
    missing = await send(tenant, subject="Missing")
    finished = await send(tenant, subject="Finished")
    async with services.db.transaction() as conn:
        await conn.execute(delete(queue_entries).where(queue_entries.c.job_id == missing))
        await conn.execute(update(jobs).where(jobs.c.id == finished).values(status="COMPLETED"))
    return missing, finished, stale


async def test_a_ledger_broken_three_ways_is_found_alerted_and_mended(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    missing, finished, stale = await _break_three_ways(services, tenant, clock)
    report = await services.reconciler().run()
    found = (report.missing_entry, report.terminal_entry, report.stale_lease)
    assert found == (1, 1, 1)
    assert (report.unaccounted, report.mended, report.locked) == (3, 3, False)
    assert _gauge() == 3
    entries = await _entries(services)
    assert set(entries) == {missing, stale}
    assert entries[stale].claim_token is None
    assert (await job(tenant, stale))["status"] == "PENDING"
    await services.alerter.flush()
    [alert] = await sb.slack()
    assert alert["path"] == SLACK_PATH.removeprefix("/slack")
    text = alert["payload"]["text"]
    # One alert per kind of violation (each resolved by a later clean pass), one batch.
    for kind in ("missing_entry", "terminal_entry", "stale_lease"):
        assert f"reconciler:{kind}: 1 found (mended 3)" in text
    assert tenant.key not in text and tenant.tenant_id not in text

    again = await services.reconciler().run()
    assert (again.unaccounted, again.mended) == (0, 0)
    assert _gauge() == 0
    # Mended means deliverable: both live jobs go out, the finished one stays as it was.
    assert await deliver(services) == 2
    assert (await job(tenant, missing))["status"] == "COMPLETED"
    assert (await job(tenant, stale))["status"] == "COMPLETED"
    assert (await job(tenant, finished))["completed_at"] is None  # untouched, as broken
    assert len(await sb.messages("resend")) == 2


async def test_a_dry_run_counts_and_changes_nothing(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await stored_provider(services, tenant.tenant_id)
    await _break_three_ways(services, tenant, clock)
    before = await _entries(services)
    report = await services.reconciler().run(dry_run=True)
    assert (report.unaccounted, report.mended, report.dry_run) == (3, 0, True)
    assert _gauge() == 3
    assert await _entries(services) == before


async def test_a_sound_ledger_reads_zero_and_alerts_nothing(
    services: Services, tenant: TenantClient, sb: Sandbox
) -> None:
    await stored_provider(services, tenant.tenant_id)
    await send(tenant)
    await disable_providers(services, tenant.tenant_id)
    await deliver(services)  # its provider gone since: FAILED, its entry gone with it
    await stored_provider(services, tenant.tenant_id)
    await send(tenant, subject="Waiting")
    report = await services.reconciler().run()
    assert (report.unaccounted, report.mended) == (0, 0)
    assert _gauge() == 0
    await services.alerter.flush()
    texts = [a["payload"]["text"] for a in await sb.slack()]
    assert len(texts) == 1 and "dead-lettered 1 job" in texts[0]  # the FAILED one
    assert not any("ledger" in t for t in texts)


async def test_batches_walk_past_the_first_slice(services: Services, tenant: TenantClient) -> None:
    await stored_provider(services, tenant.tenant_id)
    made = [await send(tenant, subject=f"n{i}") for i in range(5)]
    async with services.db.transaction() as conn:
        await conn.execute(delete(queue_entries).where(queue_entries.c.job_id.in_(made[1::2])))
    small = Reconciler(
        LedgerStore(services.db, services.clock),
        services.clock,
        services.alerter,
        ReconcilePolicy(stale_lease_seconds=300, batch_size=2),
    )
    report = await small.run()
    assert (report.missing_entry, report.mended) == (2, 2)
    assert set(await _entries(services)) == set(made)


class _StoppingAfterOneBatch(LedgerStore):
    """The real ledger store, which sets ``stop`` once it has read its first batch of
    jobs: the process was told to stop while a pass was walking the table."""

    def __init__(self, services: Services, stop: asyncio.Event) -> None:
        super().__init__(services.db, services.clock)
        self._stop = stop

    async def jobs_batch(
        self, status: JobStatus, after: str, limit: int, *, mend: bool
    ) -> JobBatch | None:
        batch = await super().jobs_batch(status, after, limit, mend=mend)
        self._stop.set()
        return batch


async def test_a_periodic_pass_ends_after_its_batch_when_the_process_stops(
    services: Services, tenant: TenantClient
) -> None:
    """A pass over a huge table (a million scheduled jobs are live) must not hold up a
    shutdown: once ``stop`` is set the pass ends after the batch it is on, concluding
    nothing (the gauge is not set); the next process's pass does the rest."""
    await stored_provider(services, tenant.tenant_id)
    missing = [await send(tenant, subject=f"Missing {n}") for n in range(5)]
    async with services.db.transaction() as conn:
        await conn.execute(delete(queue_entries).where(queue_entries.c.job_id.in_(missing)))
    REGISTRY_GAUGE.set(-1)  # a value no pass sets: shows whether this one set it
    stop = asyncio.Event()
    policy = ReconcilePolicy(stale_lease_seconds=60, batch_size=2)
    stopping = Reconciler(
        _StoppingAfterOneBatch(services, stop), services.clock, services.alerter, policy
    )
    await asyncio.wait_for(stopping.run_periodically(stop, 3600), timeout=30)
    assert len(await _entries(services)) == 2, "one batch of two mended, then it ended"
    assert _gauge() == -1, "an unfinished pass concludes nothing"

    rest = await Reconciler(
        LedgerStore(services.db, services.clock), services.clock, services.alerter, policy
    ).run()
    assert (rest.missing_entry, rest.mended, rest.stopped) == (3, 3, False)
    assert set(await _entries(services)) == set(missing)
