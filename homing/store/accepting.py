"""Accepting single jobs, with group commit: accepts that wait together share a transaction.

Every accept is the outbox of docs/architecture.md "The queue": its job, its queue entry and its
count in the month's usage commit together or not at all, and its caller is answered
only after that commit. Under load many accepts wait at the same moment; rather than
one transaction each (BEGIN, an idempotency lookup, a suppression lookup, two inserts,
a counter upsert, COMMIT: eight round trips, and the tenant's counter row locked by
each in turn), those waiting share one: one lookup of each kind, one counter upsert per
(tenant, channel), two multi-row inserts, one COMMIT. With nothing else waiting a group
is one accept and costs what a lone transaction does. One group runs at a time in a
process (``concurrency``): accepts arriving meanwhile form the next, so the busier the
process the larger its groups; two groups at once only split the waiting accepts and
then queue on the tenant's counter row (measured: docs/benchmarks.md). Several API
processes run their groups side by side.

No accept fails for another's sake:

- a group never holds two accepts with the same (tenant, Idempotency-Key): the second
  waits for the next group and is answered as a replay of the first;
- an accept with an ordering key goes alone (its advisory lock and place in line are
  taken as before, ``homing.store.ordering``);
- an accept's own refusal (its idempotency conflict, the domain rule) is its answer
  alone; a quota refused for several accepts of one tenant together sends each of them
  through again alone, so exactly those over the quota are refused;
- a database error in a group of several sends each accept through again alone, so a
  value one database refuses (``UnstorableValue``) is that request's 422 only. Only
  ``StoreUnavailable`` (no database now) answers the whole group at once.

A batch (``homing.store.batches``) is the other kind of group: accepts that must commit
together. It runs the same routine, ``accept_together``, with ``whole=True``: a quota
refuses it whole, and an Idempotency-Key repeated inside it is answered from the job
its first use stores.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime, month_of
from homing.crypto import AddressRefs
from homing.domain.accepting import Accepted, NewJob
from homing.errors import HomingError, IdempotencyConflict, QuotaExceeded, StoreUnavailable
from homing.models import JobStatus, Priority, Queue, Quota, new_id
from homing.store.database import Database
from homing.store.ordering import lock_ordering_keys, place
from homing.store.preferences import unwanted_rows
from homing.store.rows import job_from_row
from homing.store.sql import one_of
from homing.store.suppressions import address_key_of, suppress_rows
from homing.store.tables.core import jobs, queue_entries
from homing.store.usage import charge

__all__ = [
    "Accept",
    "AcceptCheck",
    "AcceptGroups",
    "StoredRow",
    "TraceReader",
    "accept_together",
    "entry_row",
    "job_row",
    "replay",
    "replayed",
    "traced",
    "untraced",
]

# Groups of accepts in one transaction: bounded, so one group's statements stay small.
MAX_GROUP = 256

# Reads the traceparent of the span in progress: ``homing.tracing.current_traceparent``,
# handed to the accepting doors by services.py (the store imports no tracing).
TraceReader = Callable[[], str | None]


def untraced() -> str | None:
    """The ``TraceReader`` of a store built without one: no trace."""
    return None


def traced(new: NewJob, trace: TraceReader) -> NewJob:
    """``new`` with the traceparent ``trace`` reads now, in the accepting caller's task
    (a group's transaction runs in a task of its own, under another request's span)."""
    if new.traceparent is not None:
        return new
    traceparent = trace()
    return new if traceparent is None else replace(new, traceparent=traceparent)


@dataclass(frozen=True, slots=True)
class AcceptCheck:
    """A rule the accepting transaction checks before it stores a new job (not on a
    replay), with no round trip of its own: ``load`` reads what the rule needs, once per
    ``scope`` in a group (the same scope must load the same thing), and ``apply``
    raises a HomingError to refuse this job."""

    scope: Hashable
    load: Callable[[AsyncConnection], Awaitable[Any]]
    apply: Callable[[Any], None]


@dataclass(frozen=True, slots=True)
class Accept:
    """One job to accept: the job, the quotas it counts toward and the rule that may
    refuse it."""

    new: NewJob
    quotas: tuple[Quota, ...] = ()
    check: AcceptCheck | None = None

    @property
    def idempotency(self) -> tuple[str, str] | None:
        key = self.new.idempotency_key
        return None if key is None else (self.new.tenant_id, key)


# What became of one accept in a group: its answer, its own refusal, or "again, alone".
_AGAIN = object()
Outcome = Accepted | HomingError | object


@dataclass(slots=True)
class _Waiting:
    accept: Accept
    answer: asyncio.Future[Accepted]


class AcceptGroups:
    """Group commit for single accepts: accepts that wait together share one
    transaction, and an accept that cannot share goes through again alone, so no accept
    fails for another's sake."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        *,
        concurrency: int = 1,
        refs: AddressRefs | None = None,
        trace: TraceReader = untraced,
    ) -> None:
        self._db = db
        self._clock = clock
        self._refs = refs
        self._trace = trace
        self._concurrency = concurrency
        self._waiting: deque[_Waiting] = deque()
        self._running = 0
        self._starting = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def accept(
        self, new: NewJob, quotas: Sequence[Quota] = (), check: AcceptCheck | None = None
    ) -> Accepted:
        """Store the job and its queue entry, or replay a prior one (see JobStore.accept)."""
        answer: asyncio.Future[Accepted] = asyncio.get_running_loop().create_future()
        new = traced(new, self._trace)
        self._waiting.append(_Waiting(Accept(new, tuple(quotas), check), answer))
        self._start()
        # A caller that goes away cancels its answer; its group skips or ignores it.
        return await answer

    def _start(self) -> None:
        """Start a group when accepts wait and a slot is free. The group takes its
        accepts when it first runs, so those arriving in the same loop turn share it."""
        if self._waiting and not self._starting and self._running < self._concurrency:
            self._starting = True
            self._running += 1
            task = asyncio.get_running_loop().create_task(self._run())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self) -> None:
        self._starting = False
        try:
            group = self._take()
            self._start()  # accepts left behind (a duplicate key, a full group) go next
            if group:
                await self._settle(group)
        finally:
            self._running -= 1
            self._start()

    def _take(self) -> list[_Waiting]:
        group: list[_Waiting] = []
        keys: set[tuple[str, str]] = set()
        later: list[_Waiting] = []
        while self._waiting and len(group) < MAX_GROUP:
            waiting = self._waiting.popleft()
            if waiting.answer.done():  # its caller went away before it was stored
                continue
            if waiting.accept.new.ordering_key is not None:
                if group:
                    self._waiting.appendleft(waiting)
                else:
                    group.append(waiting)
                break
            key = waiting.accept.idempotency
            if key is not None:
                if key in keys:
                    later.append(waiting)
                    continue
                keys.add(key)
            group.append(waiting)
        self._waiting.extendleft(reversed(later))
        return group

    async def _settle(self, group: list[_Waiting]) -> None:
        try:
            outcomes = await self._commit(group)
        except StoreUnavailable as exc:
            for waiting in group:
                _answer(waiting, exc)
            return
        except asyncio.CancelledError:
            for waiting in group:
                waiting.answer.cancel()
            raise
        except Exception as exc:
            if len(group) > 1:
                for waiting in group:
                    await self._settle([waiting])
            else:
                await self._after_error(group[0], exc)
            return
        for waiting, outcome in zip(group, outcomes, strict=True):
            if outcome is _AGAIN:
                await self._settle([waiting])
            else:
                _answer(waiting, outcome)

    async def _after_error(self, waiting: _Waiting, exc: Exception) -> None:
        """A lone accept failed. A concurrent request with the same Idempotency-Key that
        committed first is why an insert breaks the unique constraint: answer from it."""
        prior = None
        key = waiting.accept.idempotency
        if isinstance(exc, IntegrityError) and key is not None:
            try:
                async with self._db.transaction() as conn:
                    prior = (await _priors(conn, [key])).get(key)
            except Exception as again:
                exc = again
        _answer(waiting, exc if prior is None else replayed(prior, waiting.accept.new))

    async def _commit(self, group: list[_Waiting]) -> list[Outcome]:
        async with self._db.transaction() as conn:
            accepts = [waiting.accept for waiting in group]
            postgres = not self._db.is_sqlite
            return await accept_together(
                conn, accepts, self._clock.now(), postgres, refs=self._refs
            )


async def accept_together(
    conn: AsyncConnection,
    accepts: Sequence[Accept],
    epoch: float,
    postgres: bool,
    *,
    whole: bool = False,
    refs: AddressRefs | None = None,
) -> list[Outcome]:
    """Accept these jobs in the caller's transaction, with one statement of each kind
    for all of them: replay those whose Idempotency-Key is stored, apply each new job's
    rule, store the rest (SUPPRESSED for a suppressed address, or for a recipient that
    does not want the job's category on its channel), place their queue
    entries and count them. One outcome each, in order: Accepted, the accept's own
    refusal, or (``whole=False``) "again, alone" where a quota refused several
    together. With ``whole=True`` a quota refusal raises QuotaExceeded for all."""
    outcomes: list[Outcome | None] = [None] * len(accepts)
    priors = await _priors(conn, [a.idempotency for a in accepts if a.idempotency is not None])
    if priors:
        for i, accept in enumerate(accepts):
            prior = priors.get(accept.idempotency) if accept.idempotency else None
            if prior is not None:
                outcomes[i] = replayed(prior, accept.new)
    await _check(conn, accepts, outcomes)
    rows, copies = _new_rows(accepts, outcomes, epoch)
    if rows:
        preferred = [(row, p) for i, row in rows.items() if (p := accepts[i].new.preference)]
        await unwanted_rows(conn, preferred, postgres, refs)
        await _insert(conn, rows, epoch, postgres, refs)
        await _charge(conn, accepts, rows, outcomes, month_of(epoch), whole)
    for i, row in rows.items():
        if outcomes[i] is None:
            outcomes[i] = Accepted(job=job_from_row(StoredRow(row)), replayed=False)
    for i, first in copies.items():
        stored = outcomes[first]
        ok = isinstance(stored, Accepted)
        outcomes[i] = replayed(StoredRow(rows[first]), accepts[i].new) if ok else stored
    return [_AGAIN if o is None else o for o in outcomes]  # every one is set by now


def _new_rows(
    accepts: Sequence[Accept], outcomes: list[Outcome | None], epoch: float
) -> tuple[dict[int, dict[str, Any]], dict[int, int]]:
    """The ``jobs`` rows to store, by accept, and the accepts that repeat the
    Idempotency-Key of an earlier one here (a batch's): each is answered from that one."""
    rows: dict[int, dict[str, Any]] = {}
    copies: dict[int, int] = {}
    first: dict[tuple[str, str], int] = {}
    for i, accept in enumerate(accepts):
        if outcomes[i] is not None:
            continue
        key = accept.idempotency
        if key is not None:
            if key in first:
                copies[i] = first[key]
                continue
            first[key] = i
        rows[i] = job_row(accept.new, epoch)
    return rows, copies


async def _insert(
    conn: AsyncConnection,
    rows: dict[int, dict[str, Any]],
    epoch: float,
    postgres: bool,
    refs: AddressRefs | None,
) -> None:
    """The jobs (SUPPRESSED ones with no queue entry: they use no quota either) and
    their entries, each table in one multi-row insert; an ordered job's entry alone,
    placed behind the last of its key (those of a batch in the batch's order), all the
    keys locked first (``lock_ordering_keys``)."""
    await suppress_rows(conn, list(rows.values()), refs)
    # In key order, so two groups meeting on the unique index wait rather than deadlock.
    ordered = sorted(rows.values(), key=lambda r: (r["tenant_id"], r["idempotency_key"] or ""))
    # Rows as parameters, not .values(): the compiled INSERT is reused from cache.
    await conn.execute(jobs.insert(), ordered)
    free: list[dict[str, Any]] = []
    in_line: list[dict[str, Any]] = []
    for row in rows.values():
        if row["status"] == JobStatus.SUPPRESSED.value:
            continue
        entry = entry_row(row, epoch)
        (free if entry["ordering_key"] is None else in_line).append(entry)
    if in_line:  # all keys at once, in one order: two batches cannot wait on each other
        await lock_ordering_keys(
            conn, postgres, {(e["tenant_id"], e["ordering_key"]) for e in in_line}
        )
    for entry in in_line:
        await place(conn, postgres, entry, locked=True)
        await conn.execute(queue_entries.insert(), entry)
    if free:
        await conn.execute(queue_entries.insert(), free)


async def _priors(
    conn: AsyncConnection, keys: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], Any]:
    """Jobs already stored under these (tenant, Idempotency-Key) pairs."""
    if not keys:
        return {}
    wanted = set(keys)
    c = jobs.c
    tenants = {tenant for tenant, _ in wanted}
    query = select(jobs).where(
        one_of(conn, c.tenant_id, tenants), one_of(conn, c.idempotency_key, {k for _, k in wanted})
    )
    found = {(r.tenant_id, r.idempotency_key): r for r in (await conn.execute(query)).all()}
    return {key: row for key, row in found.items() if key in wanted}


async def _check(
    conn: AsyncConnection, accepts: Sequence[Accept], outcomes: list[Outcome | None]
) -> None:
    """Apply each new job's rule, loading what a rule needs once per scope."""
    loaded: dict[Hashable, Any] = {}
    for i, accept in enumerate(accepts):
        rule = accept.check
        if rule is None or outcomes[i] is not None:
            continue
        if rule.scope not in loaded:
            loaded[rule.scope] = await rule.load(conn)
        try:
            rule.apply(loaded[rule.scope])
        except HomingError as refused:
            outcomes[i] = refused


async def _charge(
    conn: AsyncConnection,
    accepts: Sequence[Accept],
    rows: dict[int, dict[str, Any]],
    outcomes: list[Outcome | None],
    period: str,
    whole: bool,
) -> None:
    """Count the stored jobs in the month's usage, one upsert per (tenant, channel), in
    a fixed order (two groups lock counters alike). Last, so a hot counter row stays
    locked only until the commit. A quota refusal of a ``whole`` group is raised (its
    transaction stores nothing); otherwise jobs a quota refuses are deleted again: one
    alone is refused; several go through again alone, so that exactly those over it are."""
    counted: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, row in rows.items():
        if row["status"] != JobStatus.SUPPRESSED.value and accepts[i].new.metered:
            counted[(row["tenant_id"], row["channel"])].append(i)
    refused: list[str] = []
    for (tenant_id, _), members in sorted(counted.items()):
        first = accepts[members[0]]
        try:
            await charge(conn, tenant_id, first.new.channel, len(members), first.quotas, period)
        except QuotaExceeded as exceeded:
            if whole:
                raise
            for i in members:
                outcomes[i] = exceeded if len(members) == 1 else _AGAIN
                refused.append(rows[i]["id"])
    if refused:
        await conn.execute(
            delete(queue_entries).where(one_of(conn, queue_entries.c.job_id, refused))
        )
        await conn.execute(delete(jobs).where(one_of(conn, jobs.c.id, refused)))


def _answer(waiting: _Waiting, outcome: Outcome) -> None:
    if waiting.answer.done():  # its caller went away; a stored job stays stored
        return
    if isinstance(outcome, Accepted):
        waiting.answer.set_result(outcome)
    elif isinstance(outcome, BaseException):
        waiting.answer.set_exception(outcome)
    else:
        raise AssertionError(f"no answer for {outcome!r}")


def replayed(prior: Any, new: NewJob) -> Accepted | IdempotencyConflict:
    """``replay``, with the conflict returned as the answer rather than raised."""
    try:
        return replay(prior, new)
    except IdempotencyConflict as conflict:
        return conflict


def job_row(new: NewJob, epoch: float) -> dict[str, Any]:
    """The ``jobs`` row of a newly accepted job. A scheduled job's ttl counts from its
    ``send_at``: it cannot be late before it is due."""
    now = as_datetime(epoch)
    start = epoch if new.send_at is None else max(epoch, new.send_at)
    return {
        "id": new_id(),
        "tenant_id": new.tenant_id,
        "channel": new.channel.value,
        "queue": new.queue.value,
        "status": JobStatus.PENDING.value,
        # Homing's own mail always goes first (docs/architecture.md, "The queue").
        "priority": int(Priority.CRITICAL if new.queue is Queue.PLATFORM_EMAIL else new.priority),
        "payload": new.payload,
        "delivery": new.delivery.value,
        "provider_pin": new.provider_pin,
        "fallback_pin": new.fallback_pin,
        "idempotency_key": new.idempotency_key,
        "request_hash": new.request_hash,
        "attempts_made": 0,
        "skipped_providers": [],
        "provider": None,
        "provider_message_id": None,
        "error": None,
        "error_class": None,
        "created_at": now,
        "updated_at": now,
        "completed_at": None,
        "test": new.test,
        "ordering_key": new.ordering_key,
        "recipient": new.address_key or address_key_of(new.channel, new.payload),
        "expires_at": None if new.ttl_seconds is None else as_datetime(start + new.ttl_seconds),
        "recipient_id": None if new.preference is None else new.preference.recipient_id,
        "category": None if new.preference is None else new.preference.category,
        "send_at": None if new.send_at is None else as_datetime(start),
        "schedule_reason": new.schedule_reason,
        "traceparent": new.traceparent,
    }


def entry_row(job_row: Any, epoch: float) -> dict[str, Any]:
    """The ``queue_entries`` row that makes a job claimable at ``epoch``, or at its
    ``send_at`` when that is later: a scheduled job waits in the queue like a retry,
    below every claim's ``available_at <= now`` until it is due."""
    send_at = job_row["send_at"]
    # ``send_at`` is held to the microsecond, rounded to the nearest: one already due
    # (a past ``send_at`` is now) may read a fraction of a microsecond past ``epoch``,
    # and must not wait behind a claim at ``epoch``.
    due = epoch if send_at is None or send_at.timestamp() - epoch < 1e-6 else send_at.timestamp()
    return {
        "job_id": job_row["id"],
        "tenant_id": job_row["tenant_id"],
        "queue": job_row["queue"],
        "priority": job_row["priority"],
        "available_at": due,
        "attempts": 0,
        "deferred_seconds": 0.0,
        "provider_calls": 0,
        "claim_token": None,
        "created_at": epoch,
        "ordering_key": job_row.get("ordering_key"),
        "seq": None,
    }


def replay(prior: Any, new: NewJob) -> Accepted:
    """The prior job for a repeated Idempotency-Key, or IdempotencyConflict."""
    same = prior.request_hash == new.request_hash or prior.request_hash in new.request_aliases
    if not same:
        raise IdempotencyConflict(
            "this Idempotency-Key was already used with a different request",
            {"job_id": prior.id},
        )
    return Accepted(job=job_from_row(prior), replayed=True)


class StoredRow:
    """Attribute access over a dict, so a freshly inserted row maps like a fetched one."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)
