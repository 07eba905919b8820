"""Feed tokens: what a tenant's server signs so one of its users may read that user's
feed from a browser (docs/feed.md, "Tokens"), as Knock's user tokens and Novu's
subscriber hash do.

    message = base64url(f"{tenant_id}.{expires}.{external_id}")   (no padding)
    token   = message + "." + hex(HMAC-SHA256(feed_secret, message))

``expires`` is a Unix time in whole seconds, at most HOMING_FEED_TOKEN_MAX_SECONDS
ahead. The external id goes last, so a dot in it is kept. A token is bounded and
shape-checked (linear-time) before anything is decoded or looked up, and its MAC is
compared in constant time.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Final

from homing.errors import Unauthenticated
from homing.managers.recipients import EXTERNAL_ID

__all__ = ["MAX_TOKEN", "ParsedToken", "parse_token", "sign_token"]

# 36-character tenant id, ten digits, a 255-character external id, in base64url; a MAC.
MAX_TOKEN: Final = 600
_TOKEN = re.compile(r"([A-Za-z0-9_-]{8,520})\.([0-9a-f]{64})")
_MESSAGE = re.compile(rf"([A-Za-z0-9-]{{1,36}})\.([0-9]{{1,12}})\.({EXTERNAL_ID})")
_REFUSED = "the feed token is not valid"


@dataclass(frozen=True, slots=True)
class ParsedToken:
    """What a well-formed token claims, before its MAC is checked."""

    tenant_id: str
    expires: int
    external_id: str
    message: str
    mac: str


def sign_token(secret: str, tenant_id: str, external_id: str, expires: int) -> str:
    """The token of this recipient until ``expires`` (what any backend computes)."""
    raw = f"{tenant_id}.{expires}.{external_id}".encode()
    message = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    return f"{message}.{_mac(secret, message)}"


def parse_token(token: str) -> ParsedToken:
    """The claims of a well-formed token; Unauthenticated otherwise (one message for
    every refusal, so a caller learns nothing of why)."""
    if len(token) > MAX_TOKEN:
        raise Unauthenticated(_REFUSED)
    shape = _TOKEN.fullmatch(token)
    if shape is None:
        raise Unauthenticated(_REFUSED)
    message, mac = shape.groups()
    try:
        raw = base64.urlsafe_b64decode(message + "=" * (-len(message) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise Unauthenticated(_REFUSED) from None
    claims = _MESSAGE.fullmatch(raw)
    if claims is None:
        raise Unauthenticated(_REFUSED)
    tenant_id, expires, external_id = claims.groups()
    return ParsedToken(tenant_id, int(expires), external_id, message, mac)


def verify_mac(secret: str, parsed: ParsedToken) -> None:
    """Unauthenticated unless the token's MAC is the secret's (constant-time)."""
    if not hmac.compare_digest(_mac(secret, parsed.message), parsed.mac):
        raise Unauthenticated(_REFUSED)


def refused() -> Unauthenticated:
    return Unauthenticated(_REFUSED)


def _mac(secret: str, message: str) -> str:
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()
