"""Resend signs its webhooks with Svix: ``svix-id``, ``svix-timestamp``, ``svix-signature``.

Svix's Python SDK verifies by renaming those headers to their Standard Webhooks names
and calling ``standardwebhooks``; so does this, without pulling in the whole Svix API
client. The secret is the ``whsec_…`` string Resend shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from standardwebhooks import Webhook, WebhookVerificationError

from homing.inbound.verification import Signed, VerificationFailed, lowered, masked, secret_string

SECRET_PREFIX = "whsec_"


def check_secret(secret: str) -> None:
    """ValueError unless ``secret`` is a usable ``whsec_`` signing secret."""
    if not secret.startswith(SECRET_PREFIX) or len(secret) < len(SECRET_PREFIX) + 16:
        raise ValueError("a Resend signing secret starts with whsec_")
    try:
        Webhook(secret)
    except Exception:  # the library raises several kinds for a bad secret
        raise ValueError("the Resend signing secret is not valid base64") from None


def verify(signing_secret: str, body: bytes, headers: Mapping[str, str]) -> None:
    """Raise VerificationFailed unless one ``v1`` signature matches, within five minutes."""
    found = lowered(headers)
    standard = {
        "webhook-id": found.get("svix-id", ""),
        "webhook-timestamp": found.get("svix-timestamp", ""),
        "webhook-signature": found.get("svix-signature", ""),
    }
    try:
        Webhook(signing_secret).verify(body, standard, json_parse=False)
    except (WebhookVerificationError, ValueError, TypeError):
        # ValueError covers a non-UTF-8 body and malformed signature lists.
        raise VerificationFailed() from None


def accept(value: Any) -> None:
    """ValueError unless ``value`` is a Svix signing secret (``whsec_…``)."""
    check_secret(secret_string(value))


def check(value: Any, request: Signed) -> None:
    """``verify`` with the account's signing secret."""
    verify(value, request.body, request.headers)


preview = masked
