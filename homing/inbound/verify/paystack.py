"""Paystack signs the raw body: ``x-paystack-signature`` = hex HMAC-SHA512, key = secret key.

The scheme has no timestamp; replays are caught by the event journal instead.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from homing.inbound.verify import VerificationFailed, lowered

SIGNATURE_HEADER = "x-paystack-signature"


def sign(secret_key: str, body: bytes) -> str:
    """The signature Paystack sends for ``body``."""
    return hmac.new(secret_key.encode(), body, hashlib.sha512).hexdigest()


def verify(secret_key: str, body: bytes, headers: Mapping[str, str]) -> None:
    """Raise VerificationFailed unless the header is this body's HMAC-SHA512."""
    given = lowered(headers).get(SIGNATURE_HEADER, "")
    if not hmac.compare_digest(sign(secret_key, body).encode(), given.encode()):
        raise VerificationFailed()
