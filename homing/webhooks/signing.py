"""Outbound webhook signatures: the seed scheme and Standard Webhooks (DESIGN §6).

Pure functions of (secrets, message id, timestamp, body); used by Homing to sign
and by ``homing.webhooks.verify`` to check.

- Seed scheme: ``X-Webhook-Timestamp`` and ``X-Webhook-Signature`` = hex
  HMAC-SHA256 of ``"{timestamp}.{body}"``, keyed with the secret exactly as the tenant
  sees it (``whsec_…`` included).
- Standard Webhooks: ``webhook-id``, ``webhook-timestamp`` and ``webhook-signature``
  = ``v1,`` + base64 HMAC-SHA256 of ``"{id}.{timestamp}.{body}"``, keyed with the
  base64-decoded part of the secret after ``whsec_``.

During a rotation several secrets sign: each signature header then holds one
signature per secret, separated by a space, newest first.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Sequence

__all__ = [
    "SECRET_PREFIX",
    "SIGNATURE_HEADERS",
    "InvalidSecret",
    "generate_secret",
    "seed_signature",
    "signature_headers",
    "standard_signature",
]

SECRET_PREFIX = "whsec_"
_SECRET_BYTES = 32

# Lower-case names of every header Homing sets for a signed delivery.
SIGNATURE_HEADERS = frozenset(
    {
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
        "x-webhook-timestamp",
        "x-webhook-signature",
    }
)


class InvalidSecret(ValueError):
    """A webhook secret must be ``whsec_`` followed by base64."""


def generate_secret() -> str:
    """A new signing secret: ``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(_SECRET_BYTES)).decode()


def _standard_key(secret: str) -> bytes:
    encoded = secret.removeprefix(SECRET_PREFIX)
    encoded += "=" * (-len(encoded) % 4)  # other issuers drop the padding
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidSecret() from None
    if not key:
        raise InvalidSecret()
    return key


def standard_signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64>``: the Standard Webhooks signature of one message."""
    content = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(_standard_key(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def seed_signature(secret: str, timestamp: int, body: bytes) -> str:
    """Hex HMAC-SHA256 of ``"{timestamp}.{body}"`` keyed with the whole secret string."""
    content = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode(), content, hashlib.sha256).hexdigest()


def signature_headers(
    signing_secrets: Sequence[str], msg_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """Every header of a delivery that depends on the secrets, the id and the time.

    With no secret the delivery is unsigned: only ``webhook-id`` and the timestamps.
    """
    headers = {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "X-Webhook-Timestamp": str(timestamp),
    }
    if signing_secrets:
        headers["webhook-signature"] = " ".join(
            standard_signature(s, msg_id, timestamp, body) for s in signing_secrets
        )
        headers["X-Webhook-Signature"] = " ".join(
            seed_signature(s, timestamp, body) for s in signing_secrets
        )
    return headers
