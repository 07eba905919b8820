"""Verify a delivery from Homing, as the receiving end (a tenant's customer) would.

    from homing.webhooks import verify, WebhookVerificationError

    event = verify(secret, request.headers, raw_body)   # raises when not genuine

Both header schemes are understood: Standard Webhooks (``webhook-*``) when present,
otherwise the seed scheme (``X-Webhook-*``). Every comparison is constant-time, and
a timestamp further than ``tolerance`` seconds from now either way is refused, so a
captured request cannot be replayed later.
"""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

from homing.webhooks.signing import InvalidSecret, seed_signature, standard_signature

__all__ = ["WebhookVerificationError", "verify"]


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
            _verify_seed(secret, lowered, raw, tolerance, current)
        else:
            raise WebhookVerificationError("no signature headers")
    except InvalidSecret:
        raise WebhookVerificationError("the secret is not whsec_ followed by base64") from None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise WebhookVerificationError("the body is not JSON") from None


def _timestamp(value: str | None, tolerance: float, now: float) -> int:
    if value is None or not (value.isascii() and value.isdigit()):
        raise WebhookVerificationError("missing or malformed timestamp")
    timestamp = int(value)
    if timestamp < now - tolerance:
        raise WebhookVerificationError("timestamp too old")
    if timestamp > now + tolerance:
        raise WebhookVerificationError("timestamp too new")
    return timestamp


def _verify_standard(
    secret: str, headers: Mapping[str, str], body: bytes, tolerance: float, now: float
) -> None:
    msg_id = headers.get("webhook-id")
    if not msg_id:
        raise WebhookVerificationError("missing webhook-id")
    timestamp = _timestamp(headers.get("webhook-timestamp"), tolerance, now)
    expected = standard_signature(secret, msg_id, timestamp, body).encode()
    offered = [s for s in headers["webhook-signature"].split() if s.startswith("v1,")]
    if not _any_matches(expected, offered):
        raise WebhookVerificationError("no matching signature")


def _verify_seed(
    secret: str, headers: Mapping[str, str], body: bytes, tolerance: float, now: float
) -> None:
    timestamp = _timestamp(headers.get("x-webhook-timestamp"), tolerance, now)
    expected = seed_signature(secret, timestamp, body).encode()
    offered = headers["x-webhook-signature"].split()
    if not _any_matches(expected, offered):
        raise WebhookVerificationError("no matching signature")


def _any_matches(expected: bytes, offered: list[str]) -> bool:
    # Compare against every candidate (no early exit) so timing says nothing about
    # which one matched.
    matched = False
    for candidate in offered:
        matched |= hmac.compare_digest(expected, candidate.encode())
    return matched
