"""Proving that an inbound request came from its provider: one verifier per vendor.

Each verifier is a pure function of the secret, the raw body and the headers (and the
time, where the scheme carries a timestamp). It returns nothing (or, where the scheme
does not sign the body, the ``Nonce`` that must not be accepted twice) or raises
``VerificationFailed``, which deliberately says nothing a forger could use: every
failure is answered with the same 401. Each vendor's module offers the same three
functions to ``homing.inbound.sources``: ``accept`` (is this value a usable secret),
``check`` (does this request verify with it) and ``preview`` (the secret, masked);
each vendor's scheme is described in its own module (``homing/vendors/<name>/verify.py``;
the billing vendors', ``homing/inbound/billing/<name>.py``): signatures over the body
(ECDSA, HMAC, Svix and Standard Webhooks), over a token inside the body, over the URL
and form, a JWT, or a secret repeated as it was set (HTTP Basic, a header).

How old a signed timestamp may be is the vendor's own retry window plus a margin
(each module's ``RETRY_WINDOW``, all of them in ``homing.inbound.sources.MAX_AGE``;
sources in docs/security.md, "Replay windows"): a vendor retries with the
signature of its first attempt, so a shorter limit turns every retry after an outage of
Homing's into a refusal, and the bounces and complaints of that outage are lost. A
replay inside the window is harmless instead: the journal applies an event id once, and
the one-time token of the one scheme that does not sign the body is remembered for the
whole window together with the body it came with. A timestamp ahead of the clock is
still refused past ``TOLERANCE_SECONDS``: no vendor signs in the future.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from homing.crypto import mask

__all__ = [
    "HOUR",
    "RETRY_MARGIN",
    "TOLERANCE_SECONDS",
    "Nonce",
    "Signed",
    "VerificationFailed",
    "fresh",
    "lowered",
    "masked",
    "secret_string",
    "strict_b64decode",
]

# The clock skew allowed between a vendor and Homing: a timestamp further ahead than
# this is refused, and so is one older where the vendor signs each attempt anew (Svix
# for Resend, Standard Webhooks for Polar: their libraries apply the same five minutes).
TOLERANCE_SECONDS: Final = 300
HOUR: Final = 3600
# Past a vendor's retry window (its module's ``RETRY_WINDOW``: how long a vendor that
# reuses its first signature keeps retrying an event; docs/security.md, "Replay
# windows", has the sources), for a vendor's queue that runs late and for clocks that
# differ.
RETRY_MARGIN: Final = HOUR


@dataclass(frozen=True, slots=True)
class Signed:
    """One inbound request as a verifier sees it: the raw body, the headers, the time it
    arrived (epoch seconds) and the public URL it was posted to (for the schemes that
    sign the URL)."""

    body: bytes
    headers: Mapping[str, str]
    now: float
    url: str = ""


def secret_string(value: Any) -> str:
    """``value`` if it is a string of 8 to 4096 characters, else ValueError."""
    if not isinstance(value, str) or len(value) < 8 or len(value) > 4096:
        raise ValueError("the secret must be a string of 8 to 4096 characters")
    return value


def masked(value: Any) -> str:
    """The preview of a machine-made secret (a signing key): ``homing.crypto.mask``."""
    return mask(str(value))


@dataclass(frozen=True, slots=True)
class Nonce:
    """A one-time value a signature covers (a token beside the body), to be accepted with
    one body only: the vendor's retry of that body again, never another body.

    ``until`` (epoch seconds): after it the signature no longer verifies anyway (its
    timestamp is stale), so the value need not be remembered longer. ``body_hash``: the
    SHA-256 hex of the body it came with.
    """

    value: str
    until: float
    body_hash: str


class VerificationFailed(Exception):
    """The request could not be verified."""

    def __init__(self) -> None:
        super().__init__("the request could not be verified")


def lowered(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers keyed by lower-case name (HTTP header names are case-insensitive)."""
    return {name.lower(): value for name, value in headers.items()}


def fresh(timestamp: str, now: float, max_age: float = TOLERANCE_SECONDS) -> int:
    """The timestamp as an int, if it is plain decimal seconds at most ``max_age`` before
    now and at most ``TOLERANCE_SECONDS`` after it."""
    if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        raise VerificationFailed()
    value = int(timestamp)
    if now - value > max_age or value - now > TOLERANCE_SECONDS:
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
