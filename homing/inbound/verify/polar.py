"""Polar signs its webhooks with Standard Webhooks (``webhook-id/-timestamp/-signature``).

Polar's SDK keys the HMAC with the secret's own UTF-8 bytes (it base64-encodes the
secret before handing it to ``standardwebhooks``, which decodes it again); so does this.
"""

from __future__ import annotations

from collections.abc import Mapping

from standardwebhooks import Webhook, WebhookVerificationError

from homing.inbound.verify import VerificationFailed, lowered


def verify(webhook_secret: str, body: bytes, headers: Mapping[str, str]) -> None:
    """Raise VerificationFailed unless one ``v1`` signature matches, within five minutes."""
    found = lowered(headers)
    standard = {
        name: found.get(name, "")
        for name in ("webhook-id", "webhook-timestamp", "webhook-signature")
    }
    try:
        Webhook(webhook_secret.encode()).verify(body, standard, json_parse=False)
    except (WebhookVerificationError, ValueError, TypeError):
        raise VerificationFailed() from None
