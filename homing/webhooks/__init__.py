"""Outbound webhooks: signing, and the receiver helper for tenants' customers.

Only the standard library is imported here, so a receiver can use
``homing.webhooks.verify`` without Homing's server dependencies being loaded.
"""

from __future__ import annotations

from homing.webhooks.signing import (
    SignatureFormat,
    generate_secret,
    seed_signature,
    standard_signature,
)
from homing.webhooks.verify import WebhookVerificationError, verify

__all__ = [
    "SignatureFormat",
    "WebhookVerificationError",
    "generate_secret",
    "seed_signature",
    "standard_signature",
    "verify",
]
