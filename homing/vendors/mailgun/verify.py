"""Mailgun signs inside the body: ``signature: {timestamp, token, signature}``.

The signature is hex HMAC-SHA256 of ``timestamp + token`` keyed with the account's
webhook signing key. The body must be parsed to find it; nothing else in it is read.
The body itself is not signed, so a captured signature block would verify any body:
``verify`` returns the token as a ``Nonce`` bound to this body's hash, which the caller
accepts with this body only. Mailgun retries a refused post with the same signature
block for 8 hours, so a timestamp is accepted for that long (``MAX_AGE_SECONDS``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any, Final

from homing.inbound.verification import (
    HOUR,
    RETRY_MARGIN,
    Nonce,
    Signed,
    VerificationFailed,
    fresh,
    masked,
    secret_string,
)

# 5, 10, 15 min, 1, 2, 4 h: "during 8 hours".
RETRY_WINDOW: Final = 8 * HOUR
MAX_AGE_SECONDS: Final = RETRY_WINDOW + RETRY_MARGIN


def _signature_block(body: bytes) -> tuple[str, str, str]:
    try:
        document: Any = json.loads(body)
        block = document["signature"]
        parts = (block["timestamp"], block["token"], block["signature"])
    except (ValueError, KeyError, TypeError, RecursionError):
        # RecursionError: JSON nested too deep to parse, sent before any proof of origin.
        raise VerificationFailed() from None
    if not all(isinstance(part, str | int) and not isinstance(part, bool) for part in parts):
        raise VerificationFailed()
    timestamp, token, signature = (str(part) for part in parts)
    return timestamp, token, signature


def verify(signing_key: str, body: bytes, *, now: float) -> Nonce:
    """The signature's token, unless the body's signature block is invalid or stale
    (VerificationFailed). The caller must refuse a token it has seen with another body."""
    timestamp, token, signature = _signature_block(body)
    signed_at = fresh(timestamp, now, MAX_AGE_SECONDS)
    expected = hmac.new(signing_key.encode(), (timestamp + token).encode(), hashlib.sha256)
    if not hmac.compare_digest(expected.hexdigest().encode(), signature.encode()):
        raise VerificationFailed()
    return Nonce(token, signed_at + MAX_AGE_SECONDS, hashlib.sha256(body).hexdigest())


def accept(value: Any) -> None:
    """ValueError unless ``value`` can be a webhook signing key."""
    secret_string(value)


def check(value: Any, request: Signed) -> Nonce:
    """``verify`` with the account's signing key."""
    return verify(value, request.body, now=request.now)


preview = masked
