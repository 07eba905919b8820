"""Outbound webhook signatures: the ``X-Webhook-*`` headers and Standard Webhooks.

Pure functions of (secrets, message id, time, body, format); used by Homing to sign
and by ``homing.webhooks.verify`` to check.

- ``X-Webhook-*`` in the ``design`` format (the default): ``X-Webhook-Timestamp`` is
  Unix time in **milliseconds** and ``X-Webhook-Signature`` is **one** lowercase hex
  HMAC-SHA256 of ``"{timestamp}.{body}"``, keyed with the secret exactly as the tenant
  sees it (``whsec_…`` included).
- ``X-Webhook-*`` in the ``notifykit`` format (for teams moving from NotifyKit): the
  timestamp in **seconds**, and ``X-Webhook-Signature: t=<seconds>,v1=<hex>`` with the
  same HMAC over ``"{seconds}.{body}"``, as NotifyKit's SDK ``verifyWebhookSignature``
  checks it (github.com/Brayzonn/notifykit-sdk, ``src/webhooks.ts``).
- Standard Webhooks: ``webhook-id``, ``webhook-timestamp`` (seconds) and
  ``webhook-signature`` = ``v1,`` + base64 HMAC-SHA256 of ``"{id}.{timestamp}.{body}"``,
  keyed with the base64-decoded part of the secret after ``whsec_``.

During a rotation two secrets sign. ``webhook-signature`` then holds one signature per
secret, separated by a space, newest first. ``X-Webhook-Signature`` carries one
signature only, so it is made with the **previous** secret until the overlap ends:
receivers that still hold it keep verifying, and receivers that already hold the new
secret verify through the Standard Webhooks headers.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Sequence

from homing.models import SignatureFormat

__all__ = [
    "SECRET_PREFIX",
    "SIGNATURE_HEADERS",
    "InvalidSecret",
    "SignatureFormat",
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
    """Hex HMAC-SHA256 of ``"{timestamp}.{body}"`` keyed with the whole secret string.

    The ``X-Webhook-Signature`` digest of both formats: ``timestamp`` is milliseconds
    in the ``design`` format and seconds in the ``notifykit`` one.
    """
    content = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode(), content, hashlib.sha256).hexdigest()


def _x_webhook_headers(
    secret: str | None, ms: int, body: bytes, signature_format: SignatureFormat
) -> dict[str, str]:
    if signature_format is SignatureFormat.NOTIFYKIT:
        seconds = ms // 1000
        headers = {"X-Webhook-Timestamp": str(seconds)}
        if secret is not None:
            digest = seed_signature(secret, seconds, body)
            headers["X-Webhook-Signature"] = f"t={seconds},v1={digest}"
        return headers
    headers = {"X-Webhook-Timestamp": str(ms)}
    if secret is not None:
        headers["X-Webhook-Signature"] = seed_signature(secret, ms, body)
    return headers


def signature_headers(
    signing_secrets: Sequence[str],
    msg_id: str,
    now: float,
    body: bytes,
    signature_format: SignatureFormat = SignatureFormat.DESIGN,
) -> dict[str, str]:
    """Every header of a delivery that depends on the secrets, the id and the time.

    ``signing_secrets`` are the live secrets, current first; ``now`` is Unix time in
    seconds. With no secret the delivery is unsigned: only ``webhook-id`` and the
    timestamps.
    """
    ms = int(now * 1000)
    seconds = ms // 1000
    headers = {"webhook-id": msg_id, "webhook-timestamp": str(seconds)}
    if signing_secrets:
        headers["webhook-signature"] = " ".join(
            standard_signature(s, msg_id, seconds, body) for s in signing_secrets
        )
    # The last live secret is the previous one during an overlap (see the docstring).
    single = signing_secrets[-1] if signing_secrets else None
    headers.update(_x_webhook_headers(single, ms, body, signature_format))
    return headers
