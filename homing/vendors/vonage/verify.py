"""Vonage signs its Messages API webhooks with a JWT: ``Authorization: Bearer <token>``.

The token is HS256 with the account's signature secret; its ``payload_hash`` claim is
the hex SHA-256 of the raw body and ``iat`` when it was signed (refused when older than
Vonage's 24 hours of retries, ``MAX_AGE_SECONDS``, or more than 5 minutes ahead). Only HS256 is
accepted, whatever the header says otherwise ("none", an RSA algorithm): the algorithm
is ours to choose, not the sender's. The signature is
compared as the canonical base64url text of the HMAC, so no other spelling verifies.
A replay inside that window is the same event again, which the journal answers as a
duplicate without applying it twice.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any, Final

from homing.inbound.verification import (
    HOUR,
    RETRY_MARGIN,
    Signed,
    VerificationFailed,
    fresh,
    lowered,
    masked,
    secret_string,
)

MAX_TOKEN: Final = 4096
_HEADER: Final = {"alg": "HS256", "typ": "JWT"}
# 5 s doubling to 15 min, then every 15 min; 24 h.
RETRY_WINDOW: Final = 24 * HOUR
MAX_AGE_SECONDS: Final = RETRY_WINDOW + RETRY_MARGIN


def b64url(raw: bytes) -> str:
    """Unpadded base64url, as JWTs write it."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _segment(text: str) -> Any:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        if b64url(raw) != text:
            raise VerificationFailed()
        return json.loads(raw)
    except (binascii.Error, ValueError, RecursionError):
        raise VerificationFailed() from None


def sign(secret: str, claims: dict[str, Any]) -> str:
    """An HS256 JWT of ``claims`` (the sandbox and tests sign with it)."""
    head = b64url(json.dumps(_HEADER, separators=(",", ":")).encode())
    body = b64url(json.dumps(claims, separators=(",", ":")).encode())
    mac = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64url(mac)}"


def verify(secret: str, body: bytes, headers: Mapping[str, str], *, now: float) -> None:
    """Raise VerificationFailed unless the bearer token signs this body, recently."""
    scheme, _, token = lowered(headers).get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN or not token.isascii():
        raise VerificationFailed()
    parts = token.split(".")
    if len(parts) != 3:
        raise VerificationFailed()
    head, claims_text, given = parts
    header = _segment(head)
    if not isinstance(header, dict) or header.get("alg") != "HS256":
        raise VerificationFailed()
    mac = hmac.new(secret.encode(), f"{head}.{claims_text}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(b64url(mac).encode(), given.encode()):
        raise VerificationFailed()
    claims = _segment(claims_text)
    if not isinstance(claims, dict):
        raise VerificationFailed()
    digest = hashlib.sha256(body).hexdigest()
    if not hmac.compare_digest(str(claims.get("payload_hash", "")).encode(), digest.encode()):
        raise VerificationFailed()
    iat = claims.get("iat")
    if isinstance(iat, bool) or not isinstance(iat, int):
        raise VerificationFailed()
    fresh(str(iat), now, MAX_AGE_SECONDS)


def accept(value: Any) -> None:
    """ValueError unless ``value`` can be a signature secret."""
    secret_string(value)


def check(value: Any, request: Signed) -> None:
    """``verify`` with the account's signature secret."""
    verify(value, request.body, request.headers, now=request.now)


preview = masked
