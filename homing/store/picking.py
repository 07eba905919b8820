"""Which queue entries a claim takes: fair between tenants, at a cost that does not
grow with the backlog.

Within a claim, priorities are served strictly in order (CRITICAL, NORMAL, LOW).
Within a priority, tenants are served round-robin: the claim walks the tenants that
have entries, starting after the one it served last, and gives each an equal share
of the batch, never more than that tenant's room under the in-flight cap.

Every step is an index seek: the tenant walk is a recursive "skip scan" over
``(queue, priority, tenant_id, …)`` that touches one index entry per tenant; a
tenant's oldest due entries come from the same index; its in-flight count comes from
a partial index holding only leased entries. A tenant with a million waiting jobs
costs the claim no more than one with ten.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.models import Priority

# Sorts after every tenant id (UUID text), so "up to LAST" means "no upper bound".
LAST = "~"

_TENANTS = text(
    """
    WITH RECURSIVE walk(tenant_id, n) AS (
        SELECT (SELECT tenant_id FROM queue_entries
                WHERE queue = :queue AND priority = :priority AND tenant_id > :after
                ORDER BY tenant_id LIMIT 1), 1
        UNION ALL
        SELECT (SELECT e.tenant_id FROM queue_entries e
                WHERE e.queue = :queue AND e.priority = :priority AND e.tenant_id > walk.tenant_id
                ORDER BY e.tenant_id LIMIT 1), walk.n + 1
        FROM walk WHERE walk.tenant_id IS NOT NULL AND walk.n < :limit
    )
    SELECT tenant_id FROM walk WHERE tenant_id IS NOT NULL AND tenant_id <= :upto
    """
)

# The lowest and highest priority with entries in the queue: two index seeks, so an
# empty queue or an unused priority costs the claim one query, not a walk each.
_SPAN = text(
    """
    SELECT
        (SELECT priority FROM queue_entries WHERE queue = :queue
         ORDER BY priority LIMIT 1),
        (SELECT priority FROM queue_entries WHERE queue = :queue
         ORDER BY priority DESC LIMIT 1)
    """
)

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

    async def pick(self, conn: AsyncConnection, queue: str, limit: int, now: float) -> list[str]:
        """Up to ``limit`` due entry ids, highest priority first, fair within each."""
        picked: list[str] = []
        lowest, highest = (await conn.execute(_SPAN, {"queue": queue})).one()
        if lowest is None:
            return picked
        for priority in (p for p in Priority if lowest <= p <= highest):
            budget = limit - len(picked)
            if budget <= 0:
                break
            tenants = await self._walk(conn, queue, int(priority), budget)
            if not tenants:
                continue
            share = math.ceil(budget / len(tenants))
            picked += await self._take(conn, queue, int(priority), tenants, share, budget, now)
            self._cursor[(queue, int(priority))] = tenants[-1]
        return picked

    async def _walk(
        self, conn: AsyncConnection, queue: str, priority: int, limit: int
    ) -> list[str]:
        """Tenants with entries at this priority, starting after the last one served."""
        cursor = self._cursor.get((queue, priority), "")
        tenants = await self._tenants(conn, queue, priority, cursor, LAST, limit)
        if len(tenants) < limit and cursor:
            tenants += await self._tenants(conn, queue, priority, "", cursor, limit - len(tenants))
        return tenants

    async def _tenants(
        self,
        conn: AsyncConnection,
        queue: str,
        priority: int,
        after: str,
        upto: str,
        limit: int,
    ) -> list[str]:
        params = {
            "queue": queue,
            "priority": priority,
            "after": after,
            "upto": upto,
            "limit": limit,
        }
        return [row[0] for row in (await conn.execute(_TENANTS, params)).all()]

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
