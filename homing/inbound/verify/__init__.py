"""Proving that an inbound request came from its provider: one verifier per vendor.

Each verifier is a pure function of the secret, the raw body and the headers (and the
time, where the scheme carries a timestamp). It returns nothing (or, where the scheme
does not sign the body, the ``Nonce`` that must not be accepted twice) or raises
``VerificationFailed``, which deliberately says nothing a forger could use: every
failure is answered with the same 401.

    sendgrid   ECDSA P-256 / SHA-256 over timestamp + raw body (``cryptography``)
    resend     Svix (``standardwebhooks``, the library Svix's own SDK wraps)
    postmark   HTTP Basic, compared in constant time
    mailgun    hex HMAC-SHA256 of timestamp + token, inside the JSON body
    paystack   hex HMAC-SHA512 of the raw body, ``x-paystack-signature``
    polar      Standard Webhooks (``standardwebhooks``, as Polar's SDK does)
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = [
    "TOLERANCE_SECONDS",
    "Nonce",
    "VerificationFailed",
    "fresh",
    "lowered",
    "strict_b64decode",
]

# Where a scheme signs a timestamp, a request older or newer than this is refused. The
# Svix and Standard Webhooks libraries apply the same five minutes themselves.
TOLERANCE_SECONDS: Final = 300


@dataclass(frozen=True, slots=True)
class Nonce:
    """A one-time value a signature covers (Mailgun's token), to be accepted only once.

    ``until`` (epoch seconds): after it the signature no longer verifies anyway (its
    timestamp is stale), so the value need not be remembered longer.
    """

    value: str
    until: float


class VerificationFailed(Exception):
    """The request could not be verified."""

    def __init__(self) -> None:
        super().__init__("the request could not be verified")


def lowered(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers keyed by lower-case name (HTTP header names are case-insensitive)."""
    return {name.lower(): value for name, value in headers.items()}


def fresh(timestamp: str, now: float, tolerance: float = TOLERANCE_SECONDS) -> int:
    """The timestamp as an int, if it is plain decimal seconds within ``tolerance`` of now."""
    if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        raise VerificationFailed()
    value = int(timestamp)
    if abs(now - value) > tolerance:
        raise VerificationFailed()
    return value


def strict_b64decode(text: str) -> bytes:
    """Decode canonical base64 only.

    A lenient decoder accepts several spellings of the same bytes (unused low bits of the
    last character, missing padding), so a changed signature could still verify.
    """
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise VerificationFailed() from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise VerificationFailed()
    return raw
