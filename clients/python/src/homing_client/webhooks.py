"""Verify a webhook delivery from Homing, the same scheme ``homing.webhooks.verify`` checks.

    event = verify_webhook(secret, request.headers, raw_body)  # raises when not genuine

Standard Webhooks (``webhook-id``, ``webhook-timestamp`` in seconds, ``webhook-signature``
= ``v1,`` + base64 HMAC-SHA256 of ``"{id}.{timestamp}.{body}"`` keyed with the base64
after ``whsec_``) when present; otherwise ``X-Webhook-Signature``: ``t=<s>,v1=<hex>``
(the ``notifykit`` form) or one hex HMAC-SHA256 of ``"{ms}.{body}"`` keyed with the whole
secret, ``X-Webhook-Timestamp`` in milliseconds (the ``design`` form). Comparisons are
constant-time; a timestamp more than ``tolerance`` seconds away is refused.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

__all__ = ["WebhookVerificationError", "verify_webhook"]

_MAX_SIGNATURES = 8
_MAX_HEADER = 1024
_MAX_DIGITS = 16


class WebhookVerificationError(Exception):
    """The request is not a genuine, fresh delivery signed with this secret."""


def _standard_key(secret: str) -> bytes:
    encoded = secret.removeprefix("whsec_")
    encoded += "=" * (-len(encoded) % 4)
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("the secret is not whsec_ followed by base64") from None
    if not key:
        raise WebhookVerificationError("the secret is empty")
    return key


def standard_signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64>``: the Standard Webhooks signature of one message."""
    content = f"{msg_id}.{timestamp}.".encode() + body
    return (
        "v1,"
        + base64.b64encode(
            hmac.new(_standard_key(secret), content, hashlib.sha256).digest()
        ).decode()
    )


def _hex_signature(secret: str, timestamp: int, body: bytes) -> str:
    content = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode(), content, hashlib.sha256).hexdigest()


def _timestamp(value: str | None, tolerance: float, now: float, scale: int = 1) -> int:
    if value is None or not (value.isascii() and value.isdigit()) or len(value) > _MAX_DIGITS:
        raise WebhookVerificationError("missing or malformed timestamp")
    stamp = int(value)
    if stamp < (now - tolerance) * scale:
        raise WebhookVerificationError("timestamp too old")
    if stamp > (now + tolerance) * scale:
        raise WebhookVerificationError("timestamp too new")
    return stamp


def _header(headers: Mapping[str, str], name: str) -> str:
    value = headers[name]
    if len(value) > _MAX_HEADER:
        raise WebhookVerificationError("the signature header is too long")
    return value.strip()


def _any_matches(expected: str, offered: list[str]) -> bool:
    if len(offered) > _MAX_SIGNATURES:
        raise WebhookVerificationError("too many signatures")
    matched = False
    for candidate in offered:
        matched |= hmac.compare_digest(expected.encode(), candidate.encode())
    return matched


def _check_standard(
    secret: str, headers: Mapping[str, str], body: bytes, tol: float, now: float
) -> None:
    msg_id = headers.get("webhook-id")
    if not msg_id:
        raise WebhookVerificationError("missing webhook-id")
    stamp = _timestamp(headers.get("webhook-timestamp"), tol, now)
    offered = [s for s in _header(headers, "webhook-signature").split() if s.startswith("v1,")]
    if not _any_matches(standard_signature(secret, msg_id, stamp, body), offered):
        raise WebhookVerificationError("no matching signature")


def _check_x_webhook(
    secret: str, headers: Mapping[str, str], body: bytes, tol: float, now: float
) -> None:
    value = _header(headers, "x-webhook-signature")
    raw_stamp = headers.get("x-webhook-timestamp")
    if value.startswith("t="):
        parts = value.split(",", _MAX_SIGNATURES + 1)
        pairs = [part.partition("=") for part in parts]
        t = next((v.strip() for k, _, v in pairs if k.strip() == "t"), None)
        offered = [v.strip() for k, _, v in pairs if k.strip() == "v1"]
        if t != raw_stamp:
            raise WebhookVerificationError("t= does not match X-Webhook-Timestamp")
        stamp = _timestamp(raw_stamp, tol, now)
    else:
        stamp = _timestamp(raw_stamp, tol, now, scale=1000)
        offered = [value]
    if not _any_matches(_hex_signature(secret, stamp, body), offered):
        raise WebhookVerificationError("no matching signature")


def verify_webhook(
    secret: str,
    headers: Mapping[str, str],
    body: bytes | str,
    tolerance: float = 300,
    *,
    now: float | None = None,
) -> Any:
    """Check one delivery's signature and timestamp; return its parsed JSON body.

    ``headers``: the request's headers (any case); ``body``: the raw body as received.
    """
    raw = body.encode() if isinstance(body, str) else bytes(body)
    lowered = {k.lower(): v for k, v in headers.items()}
    current = time.time() if now is None else now
    if "webhook-signature" in lowered:
        _check_standard(secret, lowered, raw, tolerance, current)
    elif "x-webhook-signature" in lowered:
        _check_x_webhook(secret, lowered, raw, tolerance, current)
    else:
        raise WebhookVerificationError("no signature headers")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise WebhookVerificationError("the body is not JSON") from None
