"""Mailgun (email): its messages API on one sending domain; events HMAC-signed."""

from __future__ import annotations

from homing.models import Channel
from homing.vendors.descriptor import Credential, Vendor

VENDOR = Vendor(
    name="mailgun",
    channel=Channel.EMAIL,
    credentials=(Credential("api_key", secret=True), Credential("domain")),
    config=("region", "base_url"),
    hosts=frozenset({"api.mailgun.net", "api.eu.mailgun.net"}),
    inbound_secret="signing_secret",
)
