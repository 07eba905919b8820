"""How each provider signs the events it posts, with the sandbox's own keys.

The sandbox signs exactly as the vendors do, by hand (the standard library and
``cryptography``), so Homing's verifiers are checked against an independent signer:

- SendGrid: ECDSA P-256 / SHA-256 over ``timestamp + body``, base64 DER signature; the
  public key (base64 DER SubjectPublicKeyInfo) is what a tenant gives Homing.
- Resend (Svix): ``v1,`` + base64 HMAC-SHA256 of ``id.timestamp.body`` keyed with the
  base64-decoded ``whsec_`` secret.
- Postmark: HTTP Basic with the credentials configured on the webhook.
- Mailgun: hex HMAC-SHA256 of ``timestamp + token`` with the webhook signing key.
- Twilio: base64 HMAC-SHA1 of the URL + the sorted form fields with the auth token
  (``homing.sandbox.twilio_events``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec


@dataclass(kw_only=True, frozen=True)
class SandboxKeys:
    """The signing material of one sandbox, made fresh when it starts."""

    sendgrid_private: ec.EllipticCurvePrivateKey = field(repr=False)
    resend_secret: str = field(repr=False)
    mailgun_signing_key: str = field(repr=False)
    postmark_username: str = field(repr=False)
    postmark_password: str = field(repr=False)
    # The auth token Twilio signs callbacks with (an account's own, in real life).
    twilio_auth_token: str = field(default_factory=lambda: secrets.token_hex(16), repr=False)
    # The signature secret Vonage signs its webhook JWTs with.
    vonage_signature_secret: str = field(default_factory=lambda: secrets.token_hex(16), repr=False)
    # The secret_token a bot's setWebhook was given (Telegram repeats it in a header).
    telegram_secret_token: str = field(
        default_factory=lambda: secrets.token_urlsafe(24), repr=False
    )

    @classmethod
    def generate(cls) -> SandboxKeys:
        return cls(
            sendgrid_private=ec.generate_private_key(ec.SECP256R1()),
            resend_secret="whsec_" + base64.b64encode(secrets.token_bytes(24)).decode(),
            mailgun_signing_key=secrets.token_hex(16),
            postmark_username="sandbox",
            postmark_password=secrets.token_urlsafe(18),
        )

    @property
    def sendgrid_public(self) -> str:
        der = self.sendgrid_private.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return base64.b64encode(der).decode()

    def listing(self) -> dict[str, Any]:
        """``GET /_sandbox/keys``: per provider, the body of Homing's
        ``PUT /v1/providers/{id}/inbound`` that verifies this sandbox's events."""
        return {
            "sendgrid": {"verification_key": self.sendgrid_public},
            "resend": {"signing_secret": self.resend_secret},
            "mailgun": {"signing_secret": self.mailgun_signing_key},
            "twilio": {"signing_secret": self.twilio_auth_token},
            "vonage": {"signing_secret": self.vonage_signature_secret},
            "telegram": {"secret_token": self.telegram_secret_token},
            "postmark": {
                "basic_auth": {
                    "username": self.postmark_username,
                    "password": self.postmark_password,
                }
            },
        }


def sendgrid_headers(keys: SandboxKeys, body: bytes, timestamp: int) -> dict[str, str]:
    signature = keys.sendgrid_private.sign(
        str(timestamp).encode() + body, ec.ECDSA(hashes.SHA256())
    )
    return {
        "X-Twilio-Email-Event-Webhook-Signature": base64.b64encode(signature).decode(),
        "X-Twilio-Email-Event-Webhook-Timestamp": str(timestamp),
    }


def svix_headers(secret: str, body: bytes, msg_id: str, timestamp: int) -> dict[str, str]:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return {
        "svix-id": msg_id,
        "svix-timestamp": str(timestamp),
        "svix-signature": "v1," + base64.b64encode(digest).decode(),
    }


def basic_auth_header(username: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def mailgun_signature(signing_key: str, timestamp: int) -> dict[str, str]:
    token = secrets.token_hex(25)  # 50 characters, like Mailgun's
    digest = hmac.new(
        signing_key.encode(), f"{timestamp}{token}".encode(), hashlib.sha256
    ).hexdigest()
    return {"timestamp": str(timestamp), "token": token, "signature": digest}
