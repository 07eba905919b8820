"""Accepting many jobs of one tenant and channel in one transaction.

A batch is a group of accepts that must commit together: it runs the group commit's
routine (``homing.store.accepting.accept_together``) in a transaction of its own.
Every new job, its queue entry and its share of the monthly quota commit together, or
nothing does: a batch that would overflow a quota is refused whole (QuotaExceeded).
A job to a suppressed recipient is stored SUPPRESSED, with no queue entry and no quota.
Items with an Idempotency-Key already used (earlier, or earlier in the same batch)
are answered from that job and use no quota; a reused key with another body is that
item's IdempotencyConflict, and a job its rule refuses (the sending domain) is that
item's refusal, not the batch's.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.exc import IntegrityError

from homing.clock import Clock
from homing.crypto import AddressRefs
from homing.domain.accepting import Accepted, NewJob
from homing.errors import HomingError
from homing.models import Quota
from homing.store.accepting import (
    Accept,
    AcceptCheck,
    TraceReader,
    accept_together,
    traced,
    untraced,
)
from homing.store.database import Database

ItemResult = Accepted | HomingError


class BatchStore:
    """Accepts batches: many jobs of one tenant and channel, all in one transaction."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        refs: AddressRefs | None = None,
        *,
        trace: TraceReader = untraced,
    ) -> None:
        """``trace``: what a new job's traceparent is read from (homing.tracing)."""
        self._db = db
        self._clock = clock
        self._refs = refs
        self._trace = trace

    async def accept_many(
        self,
        news: Sequence[NewJob],
        quotas: Sequence[Quota] = (),
        checks: Sequence[AcceptCheck | None] | None = None,
    ) -> list[ItemResult]:
        """One result per job, in order. All jobs share one tenant and channel, and
        ``checks`` (one per job, when given) are the rules that may refuse each.

        A concurrent request that takes one of the batch's Idempotency-Keys first
        makes the insert fail; the whole transaction is then run again, and finds it.
        """
        if not news:
            return []
        rules = [None] * len(news) if checks is None else checks
        news = [traced(n, self._trace) for n in news]
        accepts = [Accept(n, tuple(quotas), c) for n, c in zip(news, rules, strict=True)]
        for try_number in (1, 2):
            try:
                async with self._db.transaction() as conn:
                    epoch, postgres = self._clock.now(), not self._db.is_sqlite
                    outcomes = await accept_together(
                        conn, accepts, epoch, postgres, whole=True, refs=self._refs
                    )
                return [_result(outcome) for outcome in outcomes]
            except IntegrityError:
                if try_number == 2:
                    raise
        raise AssertionError("unreachable")


def _result(outcome: object) -> ItemResult:
    # A whole group has no "again, alone": a quota refusal raised for all of it.
    if isinstance(outcome, Accepted | HomingError):
        return outcome
    raise AssertionError(f"no result for {outcome!r}")
