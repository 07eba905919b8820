"""Billing events from Paystack and Polar: a verified payment moves a tenant to its plan.

The checkout that led to the payment names the tenant and the plan in its metadata
(``{"tenant_id": …, "plan": "INDIE"}``). Amounts are integer minor units (kobo, cents)
and must cover the plan's price in that currency (``HOMING_BILLING_PRICES``): a
client-side checkout can set its own amount and metadata, the signature only proves
that the provider saw that payment. Without a price for the plan and currency the
event is quarantined, to be reprocessed once the price is configured.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from homing.inbound.events import EventError, EventType, RawEvent
from homing.inbound.parse import iso, load_json, mapping, text, unreadable
from homing.inbound.verify import lowered, paystack, polar
from homing.models import Payment as Payment
from homing.models import Plan
from homing.settings import Settings
from homing.settings import parse_prices as parse_prices  # re-exported

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


def _payment(data: dict[str, Any], amount: Any, reference: str) -> Payment:
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


def _single(body: bytes, event_id: str | None) -> list[RawEvent]:
    try:
        document = mapping(load_json(body), "the body")
    except EventError as exc:
        return [unreadable(body, str(exc))]
    return [RawEvent.of(event_id or "", document)]


def paystack_split(body: bytes, headers: Mapping[str, str]) -> list[RawEvent]:
    """Paystack sends no event id: the event name and the transaction id make one."""
    entries = _single(body, None)
    document = entries[0].payload
    if isinstance(document, dict):
        data = document.get("data")
        data = data if isinstance(data, dict) else {}
        ident = text(data.get("id")) or text(data.get("reference")) or entries[0].body_hash
        event_id = f"{text(document.get('event')) or 'unknown'}:{ident}"
        return [RawEvent.of(event_id, document)]
    return entries


def paystack_interpret(payload: Any) -> BillingEvent:
    """``charge.success`` is a payment; every other event is kept and ignored."""
    document = mapping(payload, "the event")
    kind = text(document.get("event")) or ""
    data = mapping(document.get("data") or {}, "'data'")
    occurred = iso(data.get("paid_at")) or iso(data.get("created_at"))
    if kind != "charge.success" or data.get("status") != "success":
        return BillingEvent(EventType.OTHER, kind, occurred)
    reference = text(data.get("reference")) or text(data.get("id")) or ""
    payment = _payment(data, data.get("amount"), reference)
    return BillingEvent(EventType.PAYMENT, kind, occurred, payment)


def polar_split(body: bytes, headers: Mapping[str, str]) -> list[RawEvent]:
    """Polar's ``webhook-id`` is stable across retries: the journal's id."""
    return _single(body, lowered(headers).get("webhook-id", ""))


def polar_interpret(payload: Any) -> BillingEvent:
    """``order.paid`` is a payment (amount before tax); every other event is ignored."""
    document = mapping(payload, "the event")
    kind = text(document.get("type")) or ""
    data = mapping(document.get("data") or {}, "'data'")
    occurred = iso(document.get("timestamp")) or iso(data.get("created_at"))
    if kind != "order.paid":
        return BillingEvent(EventType.OTHER, kind, occurred)
    amount = data.get("net_amount", data.get("amount"))
    payment = _payment(data, amount, text(data.get("id")) or "")
    return BillingEvent(EventType.PAYMENT, kind, occurred, payment)


@dataclass(frozen=True, slots=True)
class BillingSource:
    """One billing vendor: how its requests verify, with which of the operator's
    secrets (None: not configured, its URL is 404), and how its bodies read."""

    verify: Callable[[str, bytes, Mapping[str, str]], None]
    secret: Callable[[Settings], str | None]
    split: Callable[[bytes, Mapping[str, str]], list[RawEvent]]
    interpret: Callable[[Any], BillingEvent]


def _revealed(value: Any) -> str | None:
    return None if value is None else str(value.get_secret_value())


# The platform's billing vendors, by the name in ``/inbound/billing/{vendor}``.
BILLING_SOURCES: Final[Mapping[str, BillingSource]] = {
    "paystack": BillingSource(
        paystack.verify,
        lambda settings: _revealed(settings.billing.paystack_secret_key),
        paystack_split,
        paystack_interpret,
    ),
    "polar": BillingSource(
        polar.verify,
        lambda settings: _revealed(settings.billing.polar_webhook_secret),
        polar_split,
        polar_interpret,
    ),
}
