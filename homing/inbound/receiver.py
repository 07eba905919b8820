"""From a verified body to applied events: split, journal, then apply each event once.

A body is first measured: more events than ``max_events_per_body`` is PayloadTooLarge,
more than the account's ``events_per_minute`` leave room for is RateLimited; either way
before any event is journaled, so a refused body is refused whole and the provider's
retry finds nothing half-applied. Every event is journaled before it is acted on. A
repeat (same source, account and event id, same body) is answered and not applied
again; the same id with another body is a security conflict, kept and alerted, never
applied. An event that cannot be read, or names no job of the tenant that owns the
account, is quarantined with its error; ``reprocess`` tries quarantined entries again.

A signature's one-time value (a token it covers, ``Nonce``) is claimed in the transaction that
journals the body, never before: a 429 or a 5xx of Homing's, or a crash, before the
journal commits leaves it unclaimed, and the vendor's retry with the same signature is
taken. The same token with another body is refused as unverified, with nothing stored.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any, Final

from homing import tracing
from homing.alerts import Alerter
from homing.clock import as_datetime
from homing.domain.inbound import Entry
from homing.errors import RateLimited, StoreError
from homing.inbound.billing import BILLING_SOURCES, BillingEvent, Prices, check_price
from homing.inbound.events import DeliveryEvent, EntryStatus, EventError, EventType, RawEvent
from homing.inbound.parsing import too_many_events
from homing.inbound.sources import SOURCES, Splitter
from homing.inbound.verification import Nonce, VerificationFailed
from homing.metrics import INBOUND_EVENTS, bounded
from homing.ratelimit import RateLimiter
from homing.settings import InboundSettings
from homing.store.delivery import DeliveryStore
from homing.store.inbound import InboundStore, Journaled, event_values
from homing.store.inbound_nonces import OneTime, TokenReused

_DEFAULT = InboundSettings()

log = logging.getLogger("homing.inbound")


# Summary's names for what became of an event, as homing_inbound_events_total's results.
_RESULTS: Final[dict[str, str]] = {
    "applied": "applied",
    "ignored": "ignored",
    "quarantined": "quarantined",
    "duplicates": "duplicate",
    "conflicts": "conflict",
}
REFUSED = "refused"
OTHER = "other"


def _single(split: Callable[[bytes, Mapping[str, str]], list[RawEvent]]) -> Splitter:
    return lambda body, headers, _max_events: split(body, headers)


# Every source's splitter: the vendors' (``homing.inbound.sources``) and billing's.
SPLITTERS: Final[dict[str, Splitter]] = {
    **{name: source.split for name, source in SOURCES.items()},
    **{name: _single(source.split) for name, source in BILLING_SOURCES.items()},
}
DELIVERY: Final[dict[str, Callable[[Any], DeliveryEvent]]] = {
    name: source.events.interpret for name, source in SOURCES.items()
}
BILLING: Final[dict[str, Callable[[Any], BillingEvent]]] = {
    name: source.interpret for name, source in BILLING_SOURCES.items()
}
BILLING_ACCOUNT: Final = ""  # the journal's account for platform billing events
NO_JOB: Final = "no job of this tenant matches the event"
# An entry stored but not settled this long ago is taken as abandoned by reprocess.
STALE_AFTER: Final = timedelta(seconds=60)
RATE_WINDOW_SECONDS: Final = 60
# A nonce is kept this much past its signature's window: the processes that check it
# may not share one clock to the second.
NONCE_MARGIN: Final = timedelta(seconds=60)


@dataclass(frozen=True, slots=True)
class InboundLimits:
    """What one body, and one provider account per minute, may bring in events."""

    max_events_per_body: int = _DEFAULT.max_events_per_body
    events_per_minute: int = _DEFAULT.events_per_minute


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a body came from: its source, the account its URL named, that account's tenant."""

    source: str
    account_id: str = BILLING_ACCOUNT
    tenant_id: str | None = None


@dataclass(kw_only=True, slots=True)
class Summary:
    """Counts of what one inbound request did with its events."""

    received: int = 0
    applied: int = 0
    ignored: int = 0
    quarantined: int = 0
    duplicates: int = 0
    conflicts: int = 0

    def count(self, outcome: str) -> None:
        self.received += 1
        setattr(self, outcome, getattr(self, outcome) + 1)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class Receiver:
    """Journals verified inbound events, applies each once to its job's delivery status
    and suppressions, and quarantines what does not parse."""

    def __init__(
        self,
        journal: InboundStore,
        delivery: DeliveryStore,
        alerts: Alerter,
        prices: Prices,
        limiter: RateLimiter,
        limits: InboundLimits,
    ) -> None:
        self._journal = journal
        self._delivery = delivery
        self._alerts = alerts
        self._prices = prices
        self._limiter = limiter
        self._limits = limits

    async def receive(
        self, scope: Scope, body: bytes, headers: Mapping[str, str], nonce: Nonce | None = None
    ) -> Summary:
        """Journal and apply every event of a verified body; PayloadTooLarge or
        RateLimited (nothing journaled) when the body brings too many events.
        ``nonce``: the signature's one-time value, claimed with the journal
        (VerificationFailed, nothing journaled, when it came before with another body)."""
        limit = self._limits.max_events_per_body
        raws = SPLITTERS[scope.source](body, headers, limit)
        if len(raws) > limit:
            raise too_many_events(len(raws), limit)
        try:
            await self._admit(scope, len(raws))
        except RateLimited:
            INBOUND_EVENTS.labels(bounded(scope.source, SPLITTERS), REFUSED).inc(len(raws))
            raise
        once = None
        if nonce is not None:
            expires_at = as_datetime(nonce.until) + NONCE_MARGIN
            once = OneTime(nonce.value, nonce.body_hash, expires_at)
        try:
            journaled = await self._journal.journal_many(
                scope.source, scope.account_id, scope.tenant_id, raws, once
            )
        except TokenReused:
            raise VerificationFailed() from None
        summary = Summary()
        for raw, entry in zip(raws, journaled, strict=True):
            outcome = await self._one(scope, raw, entry)
            summary.count(outcome)
            result = _RESULTS.get(outcome, OTHER)
            INBOUND_EVENTS.labels(bounded(scope.source, SPLITTERS), result).inc()
        return summary

    async def _admit(self, scope: Scope, events: int) -> None:
        """Take the body's events from its account's window, all of them or none."""
        if scope.account_id == BILLING_ACCOUNT:
            return  # the platform's own billing vendors, verified by its own secrets
        limit = self._limits.events_per_minute
        # A body larger than the whole window counts as the whole window, not as never.
        cost = min(events, limit)
        decision = await self._limiter.hit(
            f"inbound:{scope.account_id}", limit, RATE_WINDOW_SECONDS, cost
        )
        decision.enforce(RATE_WINDOW_SECONDS, "events", " for this account")

    async def _one(self, scope: Scope, raw: RawEvent, journaled: Journaled) -> str:
        if journaled.outcome == "conflict":
            self._alerts.conflict(scope.source, scope.account_id, raw.event_id)
            return "conflicts"
        if journaled.outcome == "duplicate" and not journaled.unsettled:
            return "duplicates"
        status = await self.apply(scope, journaled.entry_id, raw.payload, raw.error)
        return "duplicates" if journaled.outcome == "duplicate" else status.value

    async def apply(
        self, scope: Scope, entry_id: str, payload: Any, error: str | None
    ) -> EntryStatus:
        """Apply one journaled event; quarantine it when it cannot be read or mapped."""
        try:
            if error is not None:
                raise EventError(error)
            if scope.source in BILLING:
                return await self._bill(scope.source, entry_id, payload)
            assert scope.tenant_id is not None
            return await self._deliver(scope, entry_id, payload)
        except EventError as exc:
            await self._journal.settle(entry_id, EntryStatus.QUARANTINED, error=str(exc))
        except StoreError:
            # The entry stays `received`: the provider's retry (or reprocess) applies it.
            raise
        except Exception as exc:  # a parser bug must not lose the event: it stays journaled
            log.exception("inbound event could not be applied", extra={"entry_id": entry_id})
            error_text = f"internal error: {type(exc).__name__}"
            await self._journal.settle(entry_id, EntryStatus.QUARANTINED, error=error_text)
        return EntryStatus.QUARANTINED

    async def _deliver(self, scope: Scope, entry_id: str, payload: Any) -> EntryStatus:
        event = DELIVERY[scope.source](payload)
        if event.type is EventType.OTHER:
            await self._journal.settle(entry_id, EntryStatus.IGNORED, **event_values(event))
            return EntryStatus.IGNORED
        assert scope.tenant_id is not None
        started = time.time_ns()
        applied = await self._delivery.apply(
            entry_id, scope.source, scope.tenant_id, event, unmatched=NO_JOB
        )
        if applied is None:
            return EntryStatus.QUARANTINED  # settled so by apply, in its transaction
        if applied.job_id:
            tracing.event_applied(
                applied.traceparent,
                started_ns=started,
                job_id=applied.job_id,
                source=scope.source,
                event_type=event.type.value,
            )
        if event.type is EventType.FAILED:
            self._alerts.provider_failed(scope.source, applied.job_id, event.vendor_type)
        return EntryStatus.APPLIED

    async def _bill(self, source: str, entry_id: str, payload: Any) -> EntryStatus:
        event = BILLING[source](payload)
        if event.payment is None:
            await self._journal.settle(
                entry_id,
                EntryStatus.IGNORED,
                event_type=event.type.value,
                vendor_type=event.vendor_type[:100],
                occurred_at=event.occurred_at,
            )
            return EntryStatus.IGNORED
        check_price(event.payment, self._prices)
        applied = await self._delivery.pay(
            entry_id, event.payment, event.vendor_type, event.occurred_at
        )
        return EntryStatus.APPLIED if applied else EntryStatus.IGNORED

    async def reprocess(self, ids: Sequence[str] = ()) -> Summary:
        """Apply quarantined (and abandoned) entries again; all of them unless ``ids``."""
        summary = Summary()
        stale_before = self._journal.now() - STALE_AFTER
        for entry in await self._journal.unprocessed(ids, stale_before):
            payload, error = _readable(entry)
            scope = Scope(entry.source, entry.provider_account_id, entry.tenant_id)
            summary.count((await self.apply(scope, entry.id, payload, error)).value)
        return summary


def _readable(entry: Entry) -> tuple[Any, str | None]:
    """The entry's event, re-read from the stored body when it had none."""
    if entry.payload is not None:
        return entry.payload, None
    try:
        return json.loads(entry.raw or ""), None
    except ValueError:
        return None, entry.error or "the body is not JSON"
