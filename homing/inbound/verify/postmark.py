"""Postmark does not sign its webhooks: it sends HTTP Basic credentials set per webhook."""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Mapping

from homing.inbound.verify import VerificationFailed, lowered


def verify(username: str, password: str, headers: Mapping[str, str]) -> None:
    """Raise VerificationFailed unless ``Authorization: Basic`` carries these credentials.

    Both halves are always compared (constant time, no short circuit), so the time taken
    does not tell whether the user name was right.
    """
    scheme, _, encoded = lowered(headers).get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        raise VerificationFailed()
    try:
        given_user, colon, given_password = base64.b64decode(
            encoded.strip(), validate=True
        ).partition(b":")
    except (binascii.Error, ValueError):
        raise VerificationFailed() from None
    user_ok = hmac.compare_digest(given_user, username.encode())
    password_ok = hmac.compare_digest(given_password, password.encode())
    if not (colon and user_ok & password_ok):
        raise VerificationFailed()
