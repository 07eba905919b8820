"""Verify a delivery from Homing, as the receiving end (a tenant's customer) would.

    from homing.webhooks import verify, WebhookVerificationError

    event = verify(secret, request.headers, raw_body)   # raises when not genuine

Every format Homing sends is understood: Standard Webhooks (``webhook-*``) when
present, otherwise ``X-Webhook-*`` in the ``notifykit`` form (``X-Webhook-Signature:
t=<seconds>,v1=<hex>``) or the ``design`` form (``X-Webhook-Timestamp`` in
milliseconds, one hex signature). A bare hex signature with a timestamp in seconds
(Homing's former form) is read as milliseconds, and so refused as stale.

Every comparison is constant-time, and a timestamp further than ``tolerance`` seconds
from now either way is refused, so a captured request cannot be replayed later.
Header values are bounded before anything is parsed.
"""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

from homing.webhooks.signing import InvalidSecret, seed_signature, standard_signature

__all__ = ["WebhookVerificationError", "verify"]

# Homing sends at most two signatures; a few more leave room, thousands are hostile.
_MAX_SIGNATURES = 8
_MAX_SIGNATURE_HEADER = 1024
_MAX_TIMESTAMP_DIGITS = 16


class WebhookVerificationError(Exception):
    """The request is not a genuine, fresh delivery signed with this secret."""


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes | str,
    tolerance: float = 300,
    *,
    now: float | None = None,
) -> Any:
    """Check the signature and the timestamp of one delivery; return the parsed body.

    ``headers`` is any mapping of the request's headers (names in any case); ``body``
    the raw body exactly as received. Raises ``WebhookVerificationError`` otherwise.
    """
    raw = body.encode() if isinstance(body, str) else bytes(body)
    lowered = {k.lower(): v for k, v in headers.items()}
    current = time.time() if now is None else now
    try:
        if "webhook-signature" in lowered:
            _verify_standard(secret, lowered, raw, tolerance, current)
        elif "x-webhook-signature" in lowered:
            _verify_x_webhook(secret, lowered, raw, tolerance, current)
        else:
            raise WebhookVerificationError("no signature headers")
    except InvalidSecret:
        raise WebhookVerificationError("the secret is not whsec_ followed by base64") from None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise WebhookVerificationError("the body is not JSON") from None


def _timestamp(value: str | None, tolerance: float, now: float, scale: int = 1) -> int:
    """The timestamp, in units of 1/``scale`` second, if it is within ``tolerance``."""
    if (
        value is None
        or not (value.isascii() and value.isdigit())
        or len(value) > _MAX_TIMESTAMP_DIGITS
    ):
        raise WebhookVerificationError("missing or malformed timestamp")
    timestamp = int(value)
    if timestamp < (now - tolerance) * scale:
        raise WebhookVerificationError("timestamp too old")
    if timestamp > (now + tolerance) * scale:
        raise WebhookVerificationError("timestamp too new")
    return timestamp


def _signature_header(headers: Mapping[str, str], name: str) -> str:
    value = headers[name]
    if len(value) > _MAX_SIGNATURE_HEADER:
        raise WebhookVerificationError("the signature header is too long")
    return value.strip()


def _verify_standard(
    secret: str, headers: Mapping[str, str], body: bytes, tolerance: float, now: float
) -> None:
    msg_id = headers.get("webhook-id")
    if not msg_id:
        raise WebhookVerificationError("missing webhook-id")
    timestamp = _timestamp(headers.get("webhook-timestamp"), tolerance, now)
    expected = standard_signature(secret, msg_id, timestamp, body).encode()
    offered = _signature_header(headers, "webhook-signature").split()
    if not _any_matches(expected, [s for s in offered if s.startswith("v1,")]):
        raise WebhookVerificationError("no matching signature")


def _verify_x_webhook(
    secret: str, headers: Mapping[str, str], body: bytes, tolerance: float, now: float
) -> None:
    value = _signature_header(headers, "x-webhook-signature")
    stamp = headers.get("x-webhook-timestamp")
    if value.startswith("t="):
        t, offered = _notifykit_parts(value)
        # NotifyKit's SDK requires t to equal X-Webhook-Timestamp, both seconds.
        if t != stamp:
            raise WebhookVerificationError("t= does not match X-Webhook-Timestamp")
        timestamp = _timestamp(stamp, tolerance, now)
    else:
        timestamp = _timestamp(stamp, tolerance, now, scale=1000)
        offered = [value]
    expected = seed_signature(secret, timestamp, body).encode()
    if not _any_matches(expected, offered):
        raise WebhookVerificationError("no matching signature")


def _notifykit_parts(value: str) -> tuple[str | None, list[str]]:
    """``t`` and every ``v1`` of ``t=<seconds>,v1=<hex>[,v1=<hex>…]``."""
    parts = value.split(",", _MAX_SIGNATURES + 1)
    if len(parts) > _MAX_SIGNATURES + 1:
        raise WebhookVerificationError("too many signatures")
    t: str | None = None
    offered: list[str] = []
    for part in parts:
        key, _, val = part.partition("=")
        if key.strip() == "t":
            t = val.strip()
        elif key.strip() == "v1":
            offered.append(val.strip())
    return t, offered


def _any_matches(expected: bytes, offered: list[str]) -> bool:
    # Compare against every candidate (no early exit) so timing says nothing about
    # which one matched.
    if len(offered) > _MAX_SIGNATURES:
        raise WebhookVerificationError("too many signatures")
    matched = False
    for candidate in offered:
        matched |= hmac.compare_digest(expected, candidate.encode())
    return matched
