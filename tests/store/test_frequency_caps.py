"""Frequency caps in the accepting transaction (homing.store.preferences), on SQLite and
PostgreSQL: past a category's cap for one person within its rolling window, a job
ends SUPPRESSED ``frequency_cap``, exactly, however the accepts are grouped, however
the sends are addressed (to the recipient or to its address alone), and on PostgreSQL
across processes accepting at the same moment."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from homing.channels import Channel
from homing.clock import ManualClock
from homing.domain.accepting import Accepted, NewJob
from homing.domain.preferences import PreferenceCheck
from homing.models import JobStatus, Priority, Queue
from homing.services import Services, build
from homing.settings import Settings
from homing.store.ordering import MOST_KEY_LOCKS
from tests.conftest import stored_tenant

CAP = {"count": 3, "per_seconds": 3600}


async def _recipient_in_capped_category(services: Services, tenant_id: str) -> PreferenceCheck:
    recipient, _ = await services.recipients.put(tenant_id, "capped", {"email": "a@example.com"})
    values = {"name": "Digest", "kind": "transactional", "frequency_cap": CAP}
    await services.recipients.put_category(tenant_id, "digest", values)
    return PreferenceCheck(recipient.id, "digest")


@pytest.fixture
async def processes(
    services: Services, settings: Settings, clock: ManualClock
) -> AsyncIterator[list[Services]]:
    """This process and three more on its database, their pools warm, so the accepts a
    test spreads over them meet in the database."""
    others = [await build(settings, clock=clock, run_migrations=False) for _ in range(3)]
    try:
        for process in (services, *others):
            await process.db.ping()
        yield [services, *others]
    finally:
        for other in others:
            await other.aclose()


def _new(tenant_id: str, check: PreferenceCheck, n: int, to: str = "a@example.com") -> NewJob:
    return NewJob(
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        priority=Priority.NORMAL,
        payload={"to": to, "from": "b@example.com", "subject": f"s{n}"},
        preference=check,
    )


def _to_address(category: str = "digest") -> PreferenceCheck:
    """An address-only send in ``category`` (the ref matters to opt-outs, not caps)."""
    return PreferenceCheck(None, category, address_ref="0" * 64)


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
    services: Services, processes: list[Services]
) -> None:
    tenant_id = await stored_tenant(services)
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


async def test_sends_to_an_address_alone_keep_exactly_the_cap(services: Services) -> None:
    tenant_id = await stored_tenant(services)
    await _recipient_in_capped_category(services, tenant_id)
    accepted = await asyncio.gather(
        *(services.jobs.accept(_new(tenant_id, _to_address(), n)) for n in range(8))
    )
    got = _classes([(a.job.status, a.job.error_class) for a in accepted])
    assert got == {"PENDING": 3, "frequency_cap": 5}
    other = await services.jobs.accept(_new(tenant_id, _to_address(), 9, "b@example.com"))
    assert other.job.status is JobStatus.PENDING, "another address has a count of its own"


async def test_a_cap_counts_a_person_however_the_sends_are_addressed(services: Services) -> None:
    tenant_id = await stored_tenant(services)
    check = await _recipient_in_capped_category(services, tenant_id)  # a@example.com
    by_recipient = [await services.jobs.accept(_new(tenant_id, check, n)) for n in range(2)]
    first = await services.jobs.accept(_new(tenant_id, _to_address(), 2, "A@Example.com"))
    second = await services.jobs.accept(_new(tenant_id, _to_address(), 3))
    again = await services.jobs.accept(_new(tenant_id, check, 4))

    assert [a.job.status for a in by_recipient] == [JobStatus.PENDING] * 2
    assert first.job.status is JobStatus.PENDING  # 2 by recipient + this one = 3
    assert second.job.error_class == "frequency_cap"
    assert again.job.error_class == "frequency_cap"  # 2 by recipient + 1 to the address


async def test_a_group_mixing_recipient_and_address_sends_keeps_exactly_the_cap(
    services: Services,
) -> None:
    tenant_id = await stored_tenant(services)
    check = await _recipient_in_capped_category(services, tenant_id)
    checks = [check if n % 2 else _to_address() for n in range(10)]
    accepted = await asyncio.gather(
        *(services.jobs.accept(_new(tenant_id, c, n)) for n, c in enumerate(checks))
    )
    got = _classes([(a.job.status, a.job.error_class) for a in accepted])
    assert got == {"PENDING": 3, "frequency_cap": 7}


async def test_four_processes_sending_both_ways_at_once_keep_exactly_the_cap(
    services: Services, processes: list[Services]
) -> None:
    tenant_id = await stored_tenant(services)
    for round_ in range(3):
        to = f"r{round_}@example.com"
        recipient, _ = await services.recipients.put(tenant_id, f"r{round_}", {"email": to})
        values = {"name": "D", "kind": "transactional", "frequency_cap": CAP}
        await services.recipients.put_category(tenant_id, f"d{round_}", values)
        by_recipient = PreferenceCheck(recipient.id, f"d{round_}")
        checks = [by_recipient if n % 3 else _to_address(f"d{round_}") for n in range(24)]
        accepted = await asyncio.gather(
            *(
                processes[n % len(processes)].jobs.accept(_new(tenant_id, c, n, to))
                for n, c in enumerate(checks)
            )
        )
        got = _classes([(a.job.status, a.job.error_class) for a in accepted])
        assert got == {"PENDING": 3, "frequency_cap": 21}, (round_, got)


async def test_batches_past_the_lock_bound_and_single_sends_keep_exactly_the_cap(
    services: Services, processes: list[Services]
) -> None:
    # A batch with more capped people than MOST_KEY_LOCKS takes the tenant's cap lock
    # alone; single sends lock their person under the same lock shared. Both at once,
    # from four processes, still keep one job per address under a cap of one.
    tenant_id = await stored_tenant(services)
    values = {
        "name": "D",
        "kind": "transactional",
        "frequency_cap": {"count": 1, "per_seconds": 60},
    }
    await services.recipients.put_category(tenant_id, "digest", values)
    addresses = [f"p{n}@example.com" for n in range(MOST_KEY_LOCKS + 4)]
    batches = [
        process.batches.accept_many(
            [_new(tenant_id, _to_address(), n, to) for n, to in enumerate(addresses)]
        )
        for process in processes[1:]
    ]
    singles = [
        services.jobs.accept(_new(tenant_id, _to_address(), n, to))
        for n, to in enumerate(addresses)
    ]
    done = await asyncio.gather(*batches, *singles)

    accepted = [a for result in done for a in (result if isinstance(result, list) else [result])]
    kept: dict[str, int] = {}
    for a in accepted:
        assert isinstance(a, Accepted), a
        if a.job.status is JobStatus.PENDING:
            kept[a.job.payload["to"]] = kept.get(a.job.payload["to"], 0) + 1
    assert kept == dict.fromkeys(addresses, 1)
