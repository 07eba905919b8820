"""Postmark does not sign its webhooks: it sends HTTP Basic credentials set per webhook."""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Mapping
from typing import Any

from homing.crypto import mask, mask_password
from homing.inbound.verification import Signed, VerificationFailed, lowered


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


def accept(value: Any) -> None:
    """ValueError unless ``value`` is ``{"username": …, "password": …}`` (1 to 256
    characters each, no ``:`` in the username)."""
    fields = value if isinstance(value, dict) else {}
    username, password = fields.get("username"), fields.get("password")
    if set(fields) != {"username", "password"} or not all(
        isinstance(v, str) and 0 < len(v) <= 256 for v in (username, password)
    ):
        raise ValueError("basic_auth needs a username and a password")
    if ":" in str(username):
        raise ValueError("a basic-auth username cannot contain ':'")


def check(value: Any, request: Signed) -> None:
    """``verify`` with the webhook's basic-auth credentials."""
    verify(value["username"], value["password"], request.headers)


def preview(value: Any) -> str:
    """Both are chosen by whoever set up the Postmark webhook: a human."""
    return f"username={mask(value['username'])}, password={mask_password(value['password'])}"
