"""Polar: its billing events, verified and read.

Polar signs its webhooks with Standard Webhooks (``webhook-id/-timestamp/-signature``).

Polar's SDK keys the HMAC with the secret's own UTF-8 bytes (it base64-encodes the
secret before handing it to ``standardwebhooks``, which decodes it again); so does this.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from standardwebhooks import Webhook, WebhookVerificationError

from homing.inbound.billing.payments import BillingEvent, payment_of, single
from homing.inbound.events import EventType, RawEvent
from homing.inbound.parsing import iso, mapping, text
from homing.inbound.verification import VerificationFailed, lowered
from homing.settings import Settings

NAME: Final = "polar"
TITLE: Final = "Polar"


def verify(webhook_secret: str, body: bytes, headers: Mapping[str, str]) -> None:
    """Raise VerificationFailed unless one ``v1`` signature matches, within five minutes."""
    found = lowered(headers)
    standard = {
        name: found.get(name, "")
        for name in ("webhook-id", "webhook-timestamp", "webhook-signature")
    }
    try:
        Webhook(webhook_secret.encode()).verify(body, standard, json_parse=False)
    except (WebhookVerificationError, ValueError, TypeError):
        raise VerificationFailed() from None


def secret(settings: Settings) -> str | None:
    """The operator's Polar webhook secret (None: not configured)."""
    value = settings.billing.polar_webhook_secret
    return None if value is None else value.get_secret_value()


def split(body: bytes, headers: Mapping[str, str]) -> list[RawEvent]:
    """Polar's ``webhook-id`` is stable across retries: the journal's id."""
    return single(body, lowered(headers).get("webhook-id", ""))


def interpret(payload: Any) -> BillingEvent:
    """``order.paid`` is a payment (amount before tax); every other event is ignored."""
    document = mapping(payload, "the event")
    kind = text(document.get("type")) or ""
    data = mapping(document.get("data") or {}, "'data'")
    occurred = iso(document.get("timestamp")) or iso(data.get("created_at"))
    if kind != "order.paid":
        return BillingEvent(EventType.OTHER, kind, occurred)
    amount = data.get("net_amount", data.get("amount"))
    payment = payment_of(data, amount, text(data.get("id")) or "")
    return BillingEvent(EventType.PAYMENT, kind, occurred, payment)
