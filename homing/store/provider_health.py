"""Provider health for the operator: calls over a recent window by vendor and by
account, failures by class, throttling and latency.

Each read is one grouped statement over ``attempts.started_at >= since`` (indexed), so
its cost follows the window's rows. Latency is counted into fixed buckets in the same
statement (``duration_ms <= bound``), so the 95th percentile is read as "at most the
first bound that holds 95 % of the calls", the same way on SQLite and PostgreSQL.
Accounts are ordered by failures, then calls, and read a bounded page at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, case, func, select

from homing.domain.provider_health import FAILED_OUTCOMES, LATENCY_BOUNDS_MS, Health
from homing.models import AttemptOutcome
from homing.store.database import Database
from homing.store.tables.core import attempts, tenants

__all__ = ["ProviderHealthStore", "p95_bound"]

_OUTCOMES = (
    AttemptOutcome.SUCCESS,
    AttemptOutcome.TRANSIENT,
    AttemptOutcome.THROTTLED,
    AttemptOutcome.PROVIDER_PERMANENT,
    AttemptOutcome.MESSAGE_PERMANENT,
    AttemptOutcome.UNCERTAIN,
)


def _count_if(condition: ColumnElement[bool]) -> ColumnElement[Any]:
    return func.sum(case((condition, 1), else_=0))


def _aggregates() -> list[ColumnElement[Any]]:
    a = attempts.c
    columns: list[ColumnElement[Any]] = [func.count().label("calls")]
    columns += [_count_if(a.outcome == o.value).label(o.value) for o in _OUTCOMES]
    columns += [_count_if(a.duration_ms <= b).label(f"le_{b}") for b in LATENCY_BOUNDS_MS]
    return columns


def _failures() -> ColumnElement[Any]:
    return _count_if(attempts.c.outcome.in_([o.value for o in FAILED_OUTCOMES]))


def p95_bound(within: Sequence[int], calls: int) -> int | None:
    """The first of ``LATENCY_BOUNDS_MS`` that 95 % of ``calls`` stayed under, given how
    many stayed under each (``within``, cumulative); None when even the last did not."""
    pairs = zip(LATENCY_BOUNDS_MS, within, strict=True)
    return next((b for b, n in pairs if n >= 0.95 * calls), None)


def _health(row: Any, **more: Any) -> Health:
    calls = int(row.calls)
    within = [int(getattr(row, f"le_{b}") or 0) for b in LATENCY_BOUNDS_MS]
    outcomes = {o.value: int(getattr(row, o.value) or 0) for o in _OUTCOMES}
    return Health(
        provider=row.provider,
        calls=calls,
        outcomes=outcomes,
        p95_ms=p95_bound(within, calls),
        **more,
    )


class ProviderHealthStore:
    """Grouped reads of ``attempts`` over a window (skipped providers not counted)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def by_vendor(self, since: datetime) -> list[Health]:
        """Every vendor called since ``since``, by name."""
        a = attempts.c
        query = (
            select(a.provider, *_aggregates())
            .where(a.started_at >= since, a.outcome != AttemptOutcome.SKIPPED.value)
            .group_by(a.provider)
            .order_by(a.provider)
        )
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [_health(row) for row in rows]

    async def by_account(
        self, since: datetime, *, limit: int, offset: int
    ) -> tuple[list[Health], bool]:
        """Accounts called since ``since``, most failures first, ``limit`` from
        ``offset``; and whether more follow."""
        a = attempts.c
        failures = _failures().label("failures")
        calls = func.count()
        query = (
            select(a.provider, a.tenant_id, a.provider_account_id, tenants.c.name, failures)
            .add_columns(*_aggregates())
            .select_from(attempts.outerjoin(tenants, tenants.c.id == a.tenant_id))
            .where(a.started_at >= since, a.outcome != AttemptOutcome.SKIPPED.value)
            .group_by(a.provider, a.tenant_id, a.provider_account_id, tenants.c.name)
            .order_by(failures.desc(), calls.desc(), a.provider_account_id, a.tenant_id)
            .limit(limit + 1)
            .offset(offset)
        )
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        found = [
            _health(r, tenant_id=r.tenant_id, tenant_name=r.name, account_id=r.provider_account_id)
            for r in rows[:limit]
        ]
        return found, len(rows) > limit
