"""Mailgun (email): its messages API on one sending domain; events HMAC-signed."""

from __future__ import annotations

from homing.channels import Channel
from homing.vendors.descriptor import Credential, Vendor

VENDOR = Vendor(
    name="mailgun",
    title="Mailgun",
    channel=Channel.EMAIL,
    credentials=(Credential("api_key", secret=True), Credential("domain")),
    config=("region", "base_url"),
    hosts=frozenset({"api.mailgun.net", "api.eu.mailgun.net"}),
    inbound_secret="signing_secret",
    # The header its ``v:`` variables travel in; API keys begin ``key-``.
    owned_headers=frozenset({"x-mailgun-variables"}),
    secret_shapes=(r"key-",),
)
