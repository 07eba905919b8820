"""From a verified body to applied events: split, journal, then apply each event once.

Every event is journaled before it is acted on. A repeat (same source, account and
event id, same body) is answered and not applied again; the same id with another body
is a security conflict, kept and alerted, never applied. An event that cannot be read,
or names no job of the tenant that owns the account, is quarantined with its error;
``reprocess`` tries quarantined entries again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any, Final

from homing.errors import StoreError
from homing.inbound import billing
from homing.inbound.alerts import InboundAlerts
from homing.inbound.billing import BillingEvent, Prices, check_price
from homing.inbound.events import DeliveryEvent, EntryStatus, EventError, EventType, RawEvent
from homing.inbound.parse import mailgun, postmark, resend, sendgrid
from homing.store.delivery import DeliveryStore
from homing.store.inbound import Entry, InboundStore, event_values

log = logging.getLogger("homing.inbound")

Splitter = Callable[[bytes, Mapping[str, str]], list[RawEvent]]
SPLITTERS: Final[dict[str, Splitter]] = {
    "sendgrid": sendgrid.split,
    "resend": resend.split,
    "postmark": postmark.split,
    "mailgun": mailgun.split,
    "paystack": billing.paystack_split,
    "polar": billing.polar_split,
}
DELIVERY: Final[dict[str, Callable[[Any], DeliveryEvent]]] = {
    "sendgrid": sendgrid.interpret,
    "resend": resend.interpret,
    "postmark": postmark.interpret,
    "mailgun": mailgun.interpret,
}
BILLING: Final[dict[str, Callable[[Any], BillingEvent]]] = {
    "paystack": billing.paystack_interpret,
    "polar": billing.polar_interpret,
}
BILLING_ACCOUNT: Final = ""  # the journal's account for platform billing events
NO_JOB: Final = "no job of this tenant matches the event"
# An entry stored but not settled this long ago is taken as abandoned by reprocess.
STALE_AFTER: Final = timedelta(seconds=60)


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a body came from: its source, the account its URL named, that account's tenant."""

    source: str
    account_id: str = BILLING_ACCOUNT
    tenant_id: str | None = None


@dataclass(slots=True)
class Summary:
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
    def __init__(
        self,
        journal: InboundStore,
        delivery: DeliveryStore,
        alerts: InboundAlerts,
        prices: Prices,
    ) -> None:
        self._journal = journal
        self._delivery = delivery
        self._alerts = alerts
        self._prices = prices

    async def receive(self, scope: Scope, body: bytes, headers: Mapping[str, str]) -> Summary:
        """Journal and apply every event of a verified body."""
        summary = Summary()
        for raw in SPLITTERS[scope.source](body, headers):
            summary.count(await self._one(scope, raw))
        return summary

    async def _one(self, scope: Scope, raw: RawEvent) -> str:
        journaled = await self._journal.journal(
            scope.source, scope.account_id, scope.tenant_id, raw
        )
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
        job_id = await self._delivery.apply(entry_id, scope.source, scope.tenant_id, event)
        if job_id is None:
            values = event_values(event)
            await self._journal.settle(entry_id, EntryStatus.QUARANTINED, **values, error=NO_JOB)
            return EntryStatus.QUARANTINED
        if event.type is EventType.FAILED:
            self._alerts.provider_failed(scope.source, job_id, event.vendor_type)
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
