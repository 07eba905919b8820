"""Retention on SQLite and PostgreSQL, with a manual clock: finished jobs go with their
attempts, dead letters and inbound events; inbound events that matched no job, and
conflicting repeats, go at the same age; unfinished jobs stay whatever their age;
payloads between the two ages are scrubbed, metadata kept; one worker purges at a
time; a dry run changes nothing."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from sqlalchemy import func, select, text

from homing.channels import Channel
from homing.clock import ManualClock, as_datetime
from homing.domain.accepting import NewJob
from homing.domain.queue import Completed, Failed, Rescheduled
from homing.errors import Conflict, NotFound
from homing.managers.retention import PURGED, SCRUBBED
from homing.models import Attempt, AttemptOutcome, JobStatus, Priority, Queue, new_id
from homing.services import Services
from homing.store.retention import RETENTION_LOCK_KEY
from homing.store.tables.core import attempts, dead_letters, jobs
from homing.store.tables.inbound import inbound_conflicts, inbound_events
from homing.store.tables.notifications import (
    digest_items,
    digests,
    notification_steps,
    notifications,
)
from tests.conftest import stored_tenant
from tests.store_helpers import claim

DAY = 86_400.0
PAYLOAD = {
    "to": "ada@example.com",
    "from": "b@example.com",
    "subject": "Your code",
    "text": "123456",
    "html": "<b>123456</b>",
    "headers_sealed": "v1.sealed",
}


def _new(tenant_id: str, key: str | None = None) -> NewJob:
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload=dict(PAYLOAD),
        idempotency_key=key,
        request_hash=f"hash-{key}" if key else None,
    )


async def _finished(
    services: Services, clock: ManualClock, tenant_id: str, *, fail: bool = False, key: str = ""
) -> str:
    """A job accepted, claimed and finished now (COMPLETED, or FAILED: dead-lettered)."""
    job_id = (await services.jobs.accept(_new(tenant_id, key or None))).job.id
    [claimed] = await claim(services.queue, Queue.EMAIL, 1, 30)
    assert claimed.job.id == job_id
    attempt = Attempt(
        job_id=job_id,
        tenant_id=tenant_id,
        number=1,
        provider_account_id=None,
        provider="resend",
        outcome=AttemptOutcome.MESSAGE_PERMANENT if fail else AttemptOutcome.SUCCESS,
        status_code=422 if fail else 200,
        error="bad address" if fail else None,
        started_at=as_datetime(clock.now()),
        duration_ms=5,
    )
    if fail:
        outcome: Any = Failed(
            job_id=job_id,
            claim_token=claimed.claim_token,
            attempts=[attempt],
            passes_made=1,
            error="bad",
            error_class="message_permanent",
        )
    else:
        outcome = Completed(
            job_id=job_id,
            claim_token=claimed.claim_token,
            attempts=[attempt],
            provider="resend",
            provider_message_id="m-1",
            passes_made=1,
        )
    await services.queue.apply([outcome])
    return job_id


async def _count(services: Services, table: Any, job_id: str) -> int:
    async with services.db.transaction() as conn:
        query = select(func.count()).select_from(table).where(table.c.job_id == job_id)
        return int(await conn.scalar(query) or 0)


async def _dead_letter_payload(services: Services, job_id: str) -> dict[str, Any]:
    async with services.db.transaction() as conn:
        query = select(dead_letters.c.payload).where(dead_letters.c.job_id == job_id)
        payload: dict[str, Any] = await conn.scalar(query)
        return payload


async def test_old_finished_jobs_go_with_their_rows_and_unfinished_ones_stay(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    done = await _finished(services, clock, tenant_id)
    dead = await _finished(services, clock, tenant_id, fail=True)
    pending = (await services.jobs.accept(_new(tenant_id))).job.id
    [first] = await claim(services.queue, Queue.EMAIL, 1, 30)
    # Retried in a year: PENDING, with a queue entry that is not due.
    later = Rescheduled(
        job_id=pending,
        claim_token=first.claim_token,
        attempts=(),
        available_at=clock.now() + 365 * DAY,
        passes_made=1,
        error="boom",
        error_class="x",
    )
    await services.queue.apply([later])
    processing = (await services.jobs.accept(_new(tenant_id))).job.id
    [held] = await claim(services.queue, Queue.EMAIL, 1, 90 * DAY)
    assert held.job.id == processing
    clock.advance(31 * DAY)
    recent = await _finished(services, clock, tenant_id)
    before = PURGED.labels(kind="jobs")._value.get()

    report = await services.retention().run()

    assert (report.jobs, report.locked) == (2, False)
    assert PURGED.labels(kind="jobs")._value.get() == before + 2
    for gone in (done, dead):
        with pytest.raises(NotFound):
            await services.jobs.get(tenant_id, gone)
        assert await _count(services, attempts, gone) == 0
        assert await _count(services, dead_letters, gone) == 0
    statuses = {
        j: (await services.jobs.get(tenant_id, j))[0].status for j in (pending, processing, recent)
    }
    assert statuses == {
        pending: JobStatus.PENDING,
        processing: JobStatus.PROCESSING,
        recent: JobStatus.COMPLETED,
    }
    assert (await services.retention().run()).jobs == 0


async def test_payloads_between_the_two_ages_are_scrubbed_and_metadata_kept(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    dead = await _finished(services, clock, tenant_id, fail=True)
    done = await _finished(services, clock, tenant_id, key="welcome-ada")
    clock.advance(8 * DAY)
    fresh = await _finished(services, clock, tenant_id)
    before = PURGED.labels(kind="payloads")._value.get()

    report = await services.retention().run()

    assert (report.jobs, report.payloads) == (0, 2)
    assert PURGED.labels(kind="payloads")._value.get() == before + 2
    job, trail = await services.jobs.get(tenant_id, done)
    assert job.payload == {
        "to": "ada@example.com",
        "from": "b@example.com",
        "subject": SCRUBBED,
        "text": SCRUBBED,
        "html": SCRUBBED,
    }
    assert (job.status, job.provider, len(trail)) == (JobStatus.COMPLETED, "resend", 1)
    assert "123456" not in str(await _dead_letter_payload(services, dead))
    assert (await services.jobs.get(tenant_id, fresh))[0].payload == PAYLOAD
    # The idempotent replay of a scrubbed job still answers the original job.
    replay = await services.jobs.accept(_new(tenant_id, "welcome-ada"))
    assert (replay.job.id, replay.job.status, replay.replayed) == (
        done,
        JobStatus.COMPLETED,
        True,
    )
    assert (await services.retention().run()).payloads == 0


# PostgreSQL only: SQLite has one process, and BEGIN IMMEDIATE serialises its transactions.
@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_second_worker_does_not_purge_while_one_is(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    old = await _finished(services, clock, tenant_id)
    clock.advance(31 * DAY)
    async with services.db.transaction() as conn:
        # Another worker, in the middle of a batch, holds the lock.
        await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": RETENTION_LOCK_KEY})
        report = await services.retention().run()
    assert (report.jobs, report.payloads, report.locked) == (0, 0, True)
    assert (await services.jobs.get(tenant_id, old))[0].status is JobStatus.COMPLETED
    assert (await services.retention().run()).jobs == 1


async def test_a_dry_run_counts_and_changes_nothing(services: Services, clock: ManualClock) -> None:
    tenant_id = await stored_tenant(services)
    old = await _finished(services, clock, tenant_id)
    clock.advance(23 * DAY)
    middle = await _finished(services, clock, tenant_id)
    clock.advance(8 * DAY)

    report = await services.retention().run(dry_run=True)

    assert (report.jobs, report.payloads, report.dry_run) == (1, 1, True)
    assert (await services.jobs.get(tenant_id, old))[0].payload == PAYLOAD
    assert (await services.jobs.get(tenant_id, middle))[0].payload == PAYLOAD
    assert (await services.retention().run()) == dataclasses.replace(report, dry_run=False)


async def test_small_batches_purge_everything_and_zero_days_keep_for_ever(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    for _ in range(5):
        await _finished(services, clock, tenant_id)
    clock.advance(400 * DAY)
    keep = services.settings.changed(retention_days=0, payload_retention_days=0)
    services.settings = keep
    assert (await services.retention().run()).jobs == 0
    services.settings = keep.changed(retention_days=30, retention_batch_size=2)
    assert (await services.retention().run()).jobs == 5
    async with services.db.transaction() as conn:
        assert await conn.scalar(select(func.count()).select_from(jobs)) == 0


async def test_a_scrubbed_failed_job_is_not_retried(services: Services, clock: ManualClock) -> None:
    tenant_id = await stored_tenant(services)
    dead = await _finished(services, clock, tenant_id, fail=True)
    clock.advance(8 * DAY)
    assert (await services.retention().run()).payloads == 1
    with pytest.raises(Conflict, match="removed by retention"):
        await services.jobs.retry(tenant_id, dead)
    assert (await services.jobs.get(tenant_id, dead))[0].status is JobStatus.FAILED


async def _inbound(
    services: Services, clock: ManualClock, event_id: str, job_id: str | None
) -> None:
    """An inbound event naming an address, and a conflicting repeat of it."""
    row = {
        "source": "resend",
        "provider_account_id": "account-1",
        "event_id": event_id,
        "tenant_id": None,
        "body_hash": "a" * 64,
        "raw": '{"to": "ada@example.com"}',
        "received_at": as_datetime(clock.now()),
    }
    async with services.db.transaction() as conn:
        await conn.execute(
            inbound_events.insert().values(
                id=new_id(), status="processed", job_id=job_id, recipient="ada@example.com", **row
            )
        )
        await conn.execute(
            inbound_conflicts.insert().values(id=new_id(), original_hash="b" * 64, **row)
        )


async def _event_ids(services: Services, table: Any) -> list[str]:
    async with services.db.transaction() as conn:
        return sorted((await conn.scalars(select(table.c.event_id))).all())


async def test_unmatched_inbound_events_and_conflicts_go_at_the_jobs_age(
    services: Services, clock: ManualClock
) -> None:
    await _inbound(services, clock, "old-unmatched", None)
    await _inbound(services, clock, "old-matched", "a-job-still-kept")
    clock.advance(31 * DAY)
    await _inbound(services, clock, "recent", None)
    services.settings = services.settings.changed(retention_batch_size=1)
    before = PURGED.labels(kind="inbound_events")._value.get()

    assert (await services.retention().run(dry_run=True)).inbound_events == 3
    report = await services.retention().run()

    assert report.inbound_events == 3  # the old unmatched event and both old conflicts
    assert PURGED.labels(kind="inbound_events")._value.get() == before + 3
    assert await _event_ids(services, inbound_events) == ["old-matched", "recent"]
    assert await _event_ids(services, inbound_conflicts) == ["recent"]
    assert (await services.retention().run()).inbound_events == 0


async def _notification(
    services: Services, clock: ManualClock, tenant_id: str, status: str, ended: bool
) -> str:
    now = as_datetime(clock.now())
    note_id = new_id()
    async with services.db.transaction() as conn:
        await conn.execute(
            notifications.insert().values(
                id=note_id,
                tenant_id=tenant_id,
                strategy="all",
                status=status,
                recipient="user-1",
                template="report",
                created_at=now,
                updated_at=now,
                completed_at=now if ended else None,
            )
        )
        await conn.execute(
            notification_steps.insert().values(
                notification_id=note_id,
                position=0,
                tenant_id=tenant_id,
                channel="email",
                status="accepted" if ended else "queued",
                created_at=now,
                updated_at=now,
            )
        )
    return note_id


async def test_ended_notifications_go_with_their_steps_at_the_jobs_age(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    old = await _notification(services, clock, tenant_id, "succeeded", ended=True)
    running = await _notification(services, clock, tenant_id, "running", ended=False)
    clock.advance(31 * DAY)
    recent = await _notification(services, clock, tenant_id, "failed", ended=True)

    assert (await services.retention().run(dry_run=True)).notifications == 1
    assert (await services.retention().run()).notifications == 1

    async with services.db.transaction() as conn:
        kept = set((await conn.scalars(select(notifications.c.id))).all())
        stepped = set((await conn.scalars(select(notification_steps.c.notification_id))).all())
    assert kept == stepped == {running, recent}
    assert old not in kept


async def _digest(services: Services, clock: ManualClock, tenant_id: str, status: str) -> str:
    """A digest closed now (sent, failed or still open) with one gathered notification."""
    now = as_datetime(clock.now())
    digest_id, gathered = (
        new_id(),
        await _notification(services, clock, tenant_id, "gathered", ended=False),
    )
    async with services.db.transaction() as conn:
        await conn.execute(
            digests.insert().values(
                id=digest_id,
                tenant_id=tenant_id,
                recipient="user-1",
                key=f"k-{digest_id}",
                seq=0,
                status=status,
                close_at=clock.now(),
                item_count=1,
                data_bytes=2,
                request={},
                created_at=now,
                sent_at=None if status == "open" else now,
            )
        )
        await conn.execute(
            digest_items.insert().values(
                digest_id=digest_id, position=0, notification_id=gathered, data={}
            )
        )
    return digest_id


async def test_sent_and_failed_digests_go_with_their_items_and_gathered_notifications(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    old = [await _digest(services, clock, tenant_id, status) for status in ("sent", "failed")]
    still_open = await _digest(services, clock, tenant_id, "open")
    clock.advance(31 * DAY)
    recent = await _digest(services, clock, tenant_id, "sent")
    services.settings = services.settings.changed(retention_batch_size=1)

    assert (await services.retention().run(dry_run=True)).digests == 2
    assert (await services.retention().run()).digests == 2

    async with services.db.transaction() as conn:
        kept = set((await conn.scalars(select(digests.c.id))).all())
        items = set((await conn.scalars(select(digest_items.c.digest_id))).all())
        gathered = (await conn.execute(select(func.count()).select_from(notifications))).scalar()
    assert kept == items == {still_open, recent}
    assert not kept & set(old)
    assert gathered == 2  # the two kept digests' notifications
