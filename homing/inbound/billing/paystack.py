"""Paystack: its billing events, verified and read.

Paystack signs the raw body: ``x-paystack-signature`` = hex HMAC-SHA512, key = secret key.
The scheme has no timestamp; replays are caught by the event journal instead.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any, Final

from homing.inbound.billing.payments import BillingEvent, payment_of, single
from homing.inbound.events import EventType, RawEvent
from homing.inbound.parsing import iso, mapping, text
from homing.inbound.verification import VerificationFailed, lowered
from homing.settings import Settings

NAME: Final = "paystack"
TITLE: Final = "Paystack"
SIGNATURE_HEADER = "x-paystack-signature"


def sign(secret_key: str, body: bytes) -> str:
    """The signature Paystack sends for ``body``."""
    return hmac.new(secret_key.encode(), body, hashlib.sha512).hexdigest()


def verify(secret_key: str, body: bytes, headers: Mapping[str, str]) -> None:
    """Raise VerificationFailed unless the header is this body's HMAC-SHA512."""
    given = lowered(headers).get(SIGNATURE_HEADER, "")
    if not hmac.compare_digest(sign(secret_key, body).encode(), given.encode()):
        raise VerificationFailed()


def secret(settings: Settings) -> str | None:
    """The operator's Paystack secret key (None: not configured)."""
    value = settings.billing.paystack_secret_key
    return None if value is None else value.get_secret_value()


def split(body: bytes, headers: Mapping[str, str]) -> list[RawEvent]:
    """Paystack sends no event id: the event name and the transaction id make one."""
    entries = single(body, None)
    document = entries[0].payload
    if isinstance(document, dict):
        data = document.get("data")
        data = data if isinstance(data, dict) else {}
        ident = text(data.get("id")) or text(data.get("reference")) or entries[0].body_hash
        event_id = f"{text(document.get('event')) or 'unknown'}:{ident}"
        return [RawEvent.of(event_id, document)]
    return entries


def interpret(payload: Any) -> BillingEvent:
    """``charge.success`` is a payment; every other event is kept and ignored."""
    document = mapping(payload, "the event")
    kind = text(document.get("event")) or ""
    data = mapping(document.get("data") or {}, "'data'")
    occurred = iso(data.get("paid_at")) or iso(data.get("created_at"))
    if kind != "charge.success" or data.get("status") != "success":
        return BillingEvent(EventType.OTHER, kind, occurred)
    reference = text(data.get("reference")) or text(data.get("id")) or ""
    payment = payment_of(data, data.get("amount"), reference)
    return BillingEvent(EventType.PAYMENT, kind, occurred, payment)
