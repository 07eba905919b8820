"""Frequency caps in the accepting transaction (homing.store.preferences), on SQLite and
PostgreSQL: past a category's cap for one recipient within its rolling window, a job
ends SUPPRESSED ``frequency_cap``, exactly, however the accepts are grouped, and on
PostgreSQL across processes accepting at the same moment."""

from __future__ import annotations

import asyncio

from homing.clock import ManualClock
from homing.models import Channel, JobStatus, Priority, Queue
from homing.services import Services, build
from homing.settings import Settings
from homing.store.accepting import NewJob
from homing.store.preferences import PreferenceCheck
from tests.conftest import stored_tenant

CAP = {"count": 3, "per_seconds": 3600}


async def _recipient_in_capped_category(services: Services, tenant_id: str) -> PreferenceCheck:
    recipient, _ = await services.recipients.put(tenant_id, "capped", {"email": "a@example.com"})
    values = {"name": "Digest", "kind": "transactional", "frequency_cap": CAP}
    await services.recipients.put_category(tenant_id, "digest", values)
    return PreferenceCheck(recipient.id, "digest")


def _new(tenant_id: str, check: PreferenceCheck, n: int) -> NewJob:
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload={"to": "a@example.com", "from": "b@example.com", "subject": f"s{n}"},
        preference=check,
    )


def _classes(statuses: list[tuple[JobStatus, str | None]]) -> dict[str | None, int]:
    found: dict[str | None, int] = {}
    for status, error_class in statuses:
        key = error_class if status is JobStatus.SUPPRESSED else status.value
        found[key] = found.get(key, 0) + 1
    return found


async def test_a_group_of_accepts_keeps_exactly_the_cap(services: Services) -> None:
    tenant_id = await stored_tenant(services)
    check = await _recipient_in_capped_category(services, tenant_id)
    accepted = await asyncio.gather(
        *(services.jobs.accept(_new(tenant_id, check, n)) for n in range(8))
    )
    got = _classes([(a.job.status, a.job.error_class) for a in accepted])
    assert got == {"PENDING": 3, "frequency_cap": 5}


async def test_the_window_rolls_on_and_suppressed_jobs_do_not_count(
    services: Services, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    check = await _recipient_in_capped_category(services, tenant_id)
    for n in range(5):
        await services.jobs.accept(_new(tenant_id, check, n))
    clock.advance(CAP["per_seconds"] - 1)
    still = await services.jobs.accept(_new(tenant_id, check, 9))
    assert still.job.error_class == "frequency_cap"
    clock.advance(2)
    again = await services.jobs.accept(_new(tenant_id, check, 10))
    assert again.job.status is JobStatus.PENDING


async def test_four_processes_accepting_at_once_keep_exactly_the_cap(
    services: Services, settings: Settings, clock: ManualClock
) -> None:
    tenant_id = await stored_tenant(services)
    others = [await build(settings, clock=clock, run_migrations=False) for _ in range(3)]
    processes = [services, *others]
    try:
        for process in processes:  # warm pools, so the accepts below meet in the database
            await process.db.ping()
        for round_ in range(5):
            recipient, _ = await services.recipients.put(tenant_id, f"r{round_}", {})
            values = {"name": "D", "kind": "transactional", "frequency_cap": CAP}
            await services.recipients.put_category(tenant_id, f"d{round_}", values)
            check = PreferenceCheck(recipient.id, f"d{round_}")
            accepted = await asyncio.gather(
                *(
                    processes[n % len(processes)].jobs.accept(_new(tenant_id, check, n))
                    for n in range(24)
                )
            )
            got = _classes([(a.job.status, a.job.error_class) for a in accepted])
            assert got == {"PENDING": 3, "frequency_cap": 21}, (round_, got)
    finally:
        for other in others:
            await other.aclose()
