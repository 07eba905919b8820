"""What every billing vendor's events share: the event, the payment it carries, the
price it must cover (``homing.inbound.billing``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from homing.inbound.events import EventError, EventType, RawEvent
from homing.inbound.parsing import load_json, mapping, text, unreadable
from homing.models import Payment, Plan

__all__ = ["BillingEvent", "Prices", "check_price", "payment_of", "single"]

Prices = Mapping[tuple[Plan, str], int]


@dataclass(frozen=True, slots=True)
class BillingEvent:
    """A billing event: a ``payment`` to apply, or ``other`` to keep and ignore."""

    type: EventType
    vendor_type: str
    occurred_at: datetime | None
    payment: Payment | None = None


def check_price(payment: Payment, prices: Prices) -> None:
    """EventError unless the payment covers the plan's price in its currency."""
    price = prices.get((payment.plan, payment.currency))
    if price is None:
        raise EventError(f"no price is configured for {payment.plan} in {payment.currency}")
    if payment.amount < price:
        raise EventError(
            f"{payment.amount} {payment.currency} is below the {payment.plan} price of {price}"
        )


def _metadata(value: Any) -> dict[str, Any]:
    if isinstance(value, str):  # Paystack returns metadata sent as a string as a string
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return {}
    return value if isinstance(value, dict) else {}


def payment_of(data: dict[str, Any], amount: Any, reference: str) -> Payment:
    metadata = _metadata(data.get("metadata"))
    tenant_id, plan = text(metadata.get("tenant_id")), text(metadata.get("plan"))
    if tenant_id is None or plan is None:
        raise EventError("the payment's metadata names no tenant_id and plan")
    if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
        raise EventError("the payment's amount is not a whole number of minor units")
    currency = text(data.get("currency"))
    if currency is None:
        raise EventError("the payment has no currency")
    try:
        chosen = Plan(plan.upper())
    except ValueError:
        raise EventError(f"the payment names an unknown plan {plan!r}") from None
    return Payment(tenant_id, chosen, amount, currency.upper(), reference)


def single(body: bytes, event_id: str | None) -> list[RawEvent]:
    try:
        document = mapping(load_json(body), "the body")
    except EventError as exc:
        return [unreadable(body, str(exc))]
    return [RawEvent.of(event_id or "", document)]
