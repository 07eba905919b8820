"""SendGrid's signed Event Webhook: ECDSA P-256 with SHA-256 over timestamp + raw body.

The verification key is the base64 DER SubjectPublicKeyInfo that SendGrid shows (PEM is
accepted too). The signature header is base64 DER. SendGrid's own helper lives in the
full SendGrid SDK on top of a pure-Python ECDSA package; ``cryptography`` (OpenSSL) is
already a dependency of Homing and does the same check. SendGrid retries a refused post
for up to 24 hours, so a timestamp is accepted for that long (``MAX_AGE_SECONDS``); a replayed
body is its events again, which the journal answers by ``sg_event_id``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from homing.inbound.verification import (
    HOUR,
    RETRY_MARGIN,
    Signed,
    VerificationFailed,
    fresh,
    lowered,
    masked,
    secret_string,
    strict_b64decode,
)

SIGNATURE_HEADER: Final = "X-Twilio-Email-Event-Webhook-Signature"
TIMESTAMP_HEADER: Final = "X-Twilio-Email-Event-Webhook-Timestamp"
# "retried at increasing intervals for up to 24 hours".
RETRY_WINDOW: Final = 24 * HOUR
MAX_AGE_SECONDS: Final = RETRY_WINDOW + RETRY_MARGIN


def load_verification_key(text: str) -> ec.EllipticCurvePublicKey:
    """Parse a verification key; ValueError unless it is a P-256 public key."""
    text = text.strip()
    try:
        if text.startswith("-----BEGIN"):
            key = serialization.load_pem_public_key(text.encode())
        else:
            key = serialization.load_der_public_key(base64.b64decode(text, validate=True))
    except (ValueError, TypeError, binascii.Error, UnicodeError):
        raise ValueError("not a base64 DER or PEM public key") from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ValueError("the verification key must be an ECDSA P-256 public key")
    return key


def verify(verification_key: str, body: bytes, headers: Mapping[str, str], *, now: float) -> None:
    """Raise VerificationFailed unless the headers sign ``body`` with this key, recently."""
    found = lowered(headers)
    timestamp = found.get(TIMESTAMP_HEADER.lower(), "")
    fresh(timestamp, now, MAX_AGE_SECONDS)
    signature = strict_b64decode(found.get(SIGNATURE_HEADER.lower(), ""))
    try:
        key = load_verification_key(verification_key)
        key.verify(signature, timestamp.encode() + body, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        raise VerificationFailed() from None


def accept(value: Any) -> None:
    """ValueError unless ``value`` is a verification key SendGrid's signatures check with."""
    load_verification_key(secret_string(value))


def check(value: Any, request: Signed) -> None:
    """``verify`` with the account's verification key."""
    verify(value, request.body, request.headers, now=request.now)


preview = masked
