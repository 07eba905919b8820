"""Which queue entries a claim takes: fair between tenants, at a cost that does not
grow with the backlog.

Within a claim, priorities are served strictly in order (CRITICAL, NORMAL, LOW).
Within a priority, tenants are served round-robin: the claim walks the tenants that
have entries due, starting after the one it served last, and gives each an equal share
of the batch, never more than that tenant's room under the in-flight cap. A tenant
whose entries all wait (scheduled sends, backoffs) takes no one's place: the walk
passes over up to ``IDLE_STEPS`` such tenants, and moves its cursor past them.

Every step is an index seek: the tenant walk is a recursive "skip scan" over
``(queue, priority, tenant_id, …)`` that touches two index entries per tenant (the
next tenant, and whether it has an entry due); a
tenant's oldest due entries come from the same index; its in-flight count comes from
a partial index holding only leased entries. A tenant with a million waiting jobs
costs the claim no more than one with ten.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.models import Priority

# Sorts after every tenant id (UUID text), so "up to LAST" means "no upper bound".
LAST = "~"
# How many tenants with nothing due (all their entries scheduled, backing off or leased)
# one walk may pass over besides those it serves: the walk's cost stays bounded however
# many tenants wait, and its cursor moves past them (``FairPicker._walk``).
IDLE_STEPS = 256

# The tenants with entries after :after (up to :upto), each with whether it has one due
# (one more seek of the same index: the tenant's earliest ``available_at``, which both
# databases read from its first index entry; EXISTS let PostgreSQL scan instead):
# :limit due ones at most, and at most :steps in all, so tenants whose entries all
# wait (scheduled sends, backoffs, leases) neither take a due tenant's place in the
# round nor make the walk unbounded (docs/scheduling.md).
_TENANTS = text(
    """
    WITH RECURSIVE walk(tenant_id, n, steps) AS (
        SELECT (SELECT tenant_id FROM queue_entries
                WHERE queue = :queue AND priority = :priority AND tenant_id > :after
                ORDER BY tenant_id LIMIT 1), 0, 1
        UNION ALL
        SELECT (SELECT e.tenant_id FROM queue_entries e
                WHERE e.queue = :queue AND e.priority = :priority AND e.tenant_id > walk.tenant_id
                ORDER BY e.tenant_id LIMIT 1),
               walk.n + CASE WHEN (
                   SELECT min(d.available_at) FROM queue_entries d
                   WHERE d.queue = :queue AND d.priority = :priority
                     AND d.tenant_id = walk.tenant_id
               ) <= :now THEN 1 ELSE 0 END,
               walk.steps + 1
        FROM walk
        WHERE walk.tenant_id IS NOT NULL AND walk.tenant_id <= :upto
          AND walk.n < :limit AND walk.steps < :steps
    )
    SELECT tenant_id, CASE WHEN (
               SELECT min(d.available_at) FROM queue_entries d
               WHERE d.queue = :queue AND d.priority = :priority
                 AND d.tenant_id = walk.tenant_id
           ) <= :now THEN 1 ELSE 0 END AS due
    FROM walk WHERE tenant_id IS NOT NULL AND tenant_id <= :upto
    ORDER BY steps
    """
)

# The lowest and highest priority with entries in each of a claim's queues: two index
# seeks per queue, all in one statement, so the empty queues and unused priorities of a
# claim round cost it one query together, not a query or a walk each.
_SPAN = """
    SELECT {i} AS i,
        (SELECT priority FROM queue_entries WHERE queue = :q{i}
         ORDER BY priority LIMIT 1) AS lowest,
        (SELECT priority FROM queue_entries WHERE queue = :q{i}
         ORDER BY priority DESC LIMIT 1) AS highest
"""


@functools.cache
def _spans_of(count: int) -> TextClause:
    return text(" UNION ALL ".join(_SPAN.format(i=i) for i in range(count)))


Span = tuple[int, int]

_INFLIGHT = text(
    """
    SELECT count(*) FROM queue_entries
    WHERE queue = :queue AND tenant_id = :tenant
      AND claim_token IS NOT NULL AND available_at > :now
    """
)

_DUE = text(
    """
    SELECT job_id FROM queue_entries
    WHERE queue = :queue AND priority = :priority AND tenant_id = :tenant
      AND available_at <= :now
    ORDER BY available_at LIMIT :take
    """
)

_PG_TAKE = text(
    """
    SELECT picked.job_id
    FROM unnest(CAST(:tenants AS text[])) WITH ORDINALITY AS t(tenant_id, ord)
    CROSS JOIN LATERAL (
        SELECT count(*) AS n FROM queue_entries i
        WHERE i.queue = :queue AND i.tenant_id = t.tenant_id
          AND i.claim_token IS NOT NULL AND i.available_at > :now
    ) inflight
    CROSS JOIN LATERAL (
        SELECT e.job_id FROM queue_entries e
        WHERE e.queue = :queue AND e.priority = :priority AND e.tenant_id = t.tenant_id
          AND e.available_at <= :now
        ORDER BY e.available_at
        LIMIT GREATEST(0, LEAST(:share, :cap - inflight.n))
        FOR UPDATE SKIP LOCKED
    ) picked
    ORDER BY t.ord
    LIMIT :budget
    """
)


class FairPicker:
    """Picks entries for a claim; remembers where its round-robin stopped."""

    def __init__(self, *, postgres: bool, tenant_inflight: int) -> None:
        self._postgres = postgres
        self._cap = tenant_inflight
        self._cursor: dict[tuple[str, int], str] = {}

    async def spans(self, conn: AsyncConnection, queues: Sequence[str]) -> dict[str, Span]:
        """The lowest and highest priority waiting in each of ``queues`` that has entries."""
        if not queues:
            return {}
        params = {f"q{i}": queue for i, queue in enumerate(queues)}
        rows = (await conn.execute(_spans_of(len(queues)), params)).all()
        return {queues[r.i]: (r.lowest, r.highest) for r in rows if r.lowest is not None}

    async def pick(
        self, conn: AsyncConnection, queue: str, span: Span, limit: int, now: float
    ) -> list[str]:
        """Up to ``limit`` due entry ids, highest priority first, fair within each;
        ``span`` is the queue's (from ``spans``)."""
        picked: list[str] = []
        lowest, highest = span
        for priority in (p for p in Priority if lowest <= p <= highest):
            budget = limit - len(picked)
            if budget <= 0:
                break
            tenants = await self._walk(conn, queue, int(priority), budget, now)
            if not tenants:
                continue
            share = math.ceil(budget / len(tenants))
            picked += await self._take(conn, queue, int(priority), tenants, share, budget, now)
            self._cursor[(queue, int(priority))] = tenants[-1]
        return picked

    async def _walk(
        self, conn: AsyncConnection, queue: str, priority: int, limit: int, now: float
    ) -> list[str]:
        """Up to ``limit`` tenants with due entries at this priority, starting after the
        last one served. Tenants with nothing due are passed over, at most
        ``IDLE_STEPS`` of them a walk; when the walk found none due, the cursor moves
        past those it passed, so the next claim goes on from there."""
        key = (queue, priority)
        cursor = self._cursor.get(key, "")
        steps = limit + IDLE_STEPS
        walked = await self._tenants(conn, queue, priority, (cursor, LAST), limit, steps, now)
        due = [tenant for tenant, is_due in walked if is_due][:limit]
        if len(walked) < steps and len(due) < limit and cursor:  # the end: wrap around
            more = await self._tenants(
                conn, queue, priority, ("", cursor), limit - len(due), steps, now
            )
            walked += more
            due += [tenant for tenant, is_due in more if is_due][: limit - len(due)]
        if not due and walked:
            self._cursor[key] = walked[-1][0]
        return due

    async def _tenants(
        self,
        conn: AsyncConnection,
        queue: str,
        priority: int,
        span: tuple[str, str],
        limit: int,
        steps: int,
        now: float,
    ) -> list[tuple[str, bool]]:
        """The tenants walked in ``span`` (after, up to), in order, each with whether
        it has an entry due."""
        params = {
            "queue": queue,
            "priority": priority,
            "after": span[0],
            "upto": span[1],
            "limit": limit,
            "steps": steps,
            "now": now,
        }
        return [(row[0], bool(row[1])) for row in (await conn.execute(_TENANTS, params)).all()]

    async def _take(
        self,
        conn: AsyncConnection,
        queue: str,
        priority: int,
        tenants: Sequence[str],
        share: int,
        budget: int,
        now: float,
    ) -> list[str]:
        if self._postgres:
            params = {
                "tenants": list(tenants),
                "queue": queue,
                "priority": priority,
                "now": now,
                "share": share,
                "cap": self._cap,
                "budget": budget,
            }
            return [row[0] for row in (await conn.execute(_PG_TAKE, params)).all()]
        return await self._take_serialised(conn, queue, priority, tenants, share, budget, now)

    async def _take_serialised(
        self,
        conn: AsyncConnection,
        queue: str,
        priority: int,
        tenants: Sequence[str],
        share: int,
        budget: int,
        now: float,
    ) -> list[str]:
        # SQLite has no LATERAL, and needs no row locks: its writers take turns.
        picked: list[str] = []
        for tenant in tenants:
            room = min(share, budget - len(picked))
            params = {"queue": queue, "tenant": tenant, "now": now}
            room = min(room, self._cap - int((await conn.execute(_INFLIGHT, params)).scalar_one()))
            if room > 0:
                params |= {"priority": priority, "take": room}
                picked += [row[0] for row in (await conn.execute(_DUE, params)).all()]
            if len(picked) >= budget:
                break
        return picked
