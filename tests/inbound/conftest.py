"""Inbound fixtures: settings with billing secrets, and helpers that sign like providers."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from svix.webhooks import Webhook as SvixWebhook

from homing.channels import Channel
from homing.models import ProviderAccount, new_id
from homing.services import Services
from homing.settings import Settings
from homing.store.providers import seal_credentials
from tests.conftest import TenantClient
from tests.fixtures import settings_for

PAYSTACK_KEY = "sk_test_paystack_0123456789"
POLAR_SECRET = "polar_whs_0123456789abcdef"
RESEND_SECRET = "whsec_" + base64.b64encode(b"inbound-resend-secret-012345").decode()
MAILGUN_KEY = "mailgun-signing-key-0123456789"
POSTMARK_AUTH = {"username": "hooks", "password": "postmark-hook-pass"}


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        inbound_max_body_bytes=4096,
        paystack_secret_key=PAYSTACK_KEY,
        polar_webhook_secret=POLAR_SECRET,
        billing_prices="INDIE:NGN:500000,STARTUP:USD:2900",
    )


async def add_account(services: Services, tenant_id: str, provider: str) -> ProviderAccount:
    """A provider account stored directly (no credential check: no provider here)."""
    account_id = new_id()
    credentials = {"api_key": f"{provider}-key-0123456789", "domain": "mg.example.com"}
    account = ProviderAccount(
        id=account_id,
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        vendor=provider,
        priority=1,
        enabled=True,
        credentials_sealed=seal_credentials(services.sealer, account_id, credentials),
        credentials_preview="api_key=…",
        config={},
        created_at=datetime.now(UTC),
    )
    return await services.providers.add(account)


class Vendor:
    """Signs bodies the way one provider does, for one account's inbound URL."""

    def __init__(self, provider: str, account_id: str) -> None:
        self.provider = provider
        self.path = f"/inbound/{provider}/{account_id}"
        self.sendgrid_key = ec.generate_private_key(ec.SECP256R1())

    def secret(self) -> dict[str, Any]:
        if self.provider == "sendgrid":
            der = self.sendgrid_key.public_key().public_bytes(
                serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            return {"verification_key": base64.b64encode(der).decode()}
        if self.provider == "postmark":
            return {"basic_auth": POSTMARK_AUTH}
        return {"signing_secret": RESEND_SECRET if self.provider == "resend" else MAILGUN_KEY}

    def sign(self, body: bytes, event_id: str = "msg_1", at: float | None = None) -> dict[str, str]:
        """The provider's headers for ``body``, stamped ``at`` (default: now)."""
        stamp = int(time.time() if at is None else at)
        if self.provider == "sendgrid":
            signature = self.sendgrid_key.sign(
                str(stamp).encode() + body, ec.ECDSA(hashes.SHA256())
            )
            return {
                "X-Twilio-Email-Event-Webhook-Signature": base64.b64encode(signature).decode(),
                "X-Twilio-Email-Event-Webhook-Timestamp": str(stamp),
            }
        if self.provider == "resend":
            moment = datetime.fromtimestamp(stamp, UTC)
            signature = SvixWebhook(RESEND_SECRET).sign(event_id, moment, body.decode())
            return {"svix-id": event_id, "svix-timestamp": str(stamp), "svix-signature": signature}
        credentials = f"{POSTMARK_AUTH['username']}:{POSTMARK_AUTH['password']}".encode()
        return {"Authorization": "Basic " + base64.b64encode(credentials).decode()}


def mailgun_body(event_data: dict[str, Any], key: str = MAILGUN_KEY) -> bytes:
    # A fresh random token per signature, as Mailgun does (a token is accepted once).
    stamp, token = str(int(time.time())), secrets.token_hex(25)
    digest = hmac.new(key.encode(), (stamp + token).encode(), hashlib.sha256).hexdigest()
    signature = {"timestamp": stamp, "token": token, "signature": digest}
    return json.dumps({"signature": signature, "event-data": event_data}).encode()


def resend_event(kind: str, job_id: str, to: str = "ada@example.com", **data: Any) -> bytes:
    body = {
        "type": kind,
        "created_at": datetime.now(UTC).isoformat(),
        "data": {"email_id": "re-1", "to": [to], "tags": {"hjid": job_id}, **data},
    }
    return json.dumps(body).encode()


async def send_email(tenant: TenantClient, to: str = "ada@example.com", **extra: Any) -> Any:
    body = {"to": to, "from": "Acme <hello@acme.example>", "subject": "Hi", "text": "Hello"}
    return await tenant.post("/v1/notifications/email", json={**body, **extra})


async def connect(services: Services, tenant: TenantClient, provider: str) -> Vendor:
    """An account of ``provider`` for the tenant, its inbound secret set through the API."""
    account = await add_account(services, tenant.tenant_id, provider)
    vendor = Vendor(provider, account.id)
    response = await tenant.api.put(
        f"/v1/providers/{account.id}/inbound", json=vendor.secret(), headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    return vendor
