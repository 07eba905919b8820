"""Billing events from the platform's billing vendors: a verified payment moves a tenant
to its plan.

The checkout that led to the payment names the tenant and the plan in its metadata
(``{"tenant_id": …, "plan": "INDIE"}``). Amounts are integer minor units (kobo, cents)
and must cover the plan's price in that currency (``HOMING_BILLING_PRICES``): a
client-side checkout can set its own amount and metadata, the signature only proves
that the provider saw that payment. Without a price for the plan and currency the
event is quarantined, to be reprocessed once the price is configured.

Each billing vendor has one module here, named after it (``verify``, ``secret``,
``split``, ``interpret``); ``BILLING_SOURCES`` lists them. They are the platform's own
vendors, not a tenant's: no descriptor in ``homing.vendors``, only this layer's code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from homing.inbound.billing import paystack, polar
from homing.inbound.billing.payments import BillingEvent as BillingEvent
from homing.inbound.billing.payments import Prices as Prices
from homing.inbound.billing.payments import check_price as check_price
from homing.inbound.events import RawEvent
from homing.models import Payment as Payment
from homing.settings import Settings
from homing.settings import parse_prices as parse_prices  # re-exported


@dataclass(frozen=True, slots=True)
class BillingSource:
    """One billing vendor: its own spelling, how its requests verify, with which of the
    operator's secrets (None: not configured, its URL is 404), and how its bodies read."""

    title: str
    verify: Callable[[str, bytes, Mapping[str, str]], None]
    secret: Callable[[Settings], str | None]
    split: Callable[[bytes, Mapping[str, str]], list[RawEvent]]
    interpret: Callable[[Any], BillingEvent]


# The platform's billing vendors, by the name in ``/inbound/billing/{vendor}``.
BILLING_SOURCES: Final[Mapping[str, BillingSource]] = {
    vendor.NAME: BillingSource(
        vendor.TITLE, vendor.verify, vendor.secret, vendor.split, vendor.interpret
    )
    for vendor in (paystack, polar)
}
