"""Resend (email): its emails API; events signed by Svix."""

from __future__ import annotations

from homing.models import Channel
from homing.vendors.descriptor import Credential, Vendor

VENDOR = Vendor(
    name="resend",
    channel=Channel.EMAIL,
    credentials=(Credential("api_key", secret=True),),
    config=("base_url",),
    hosts=frozenset({"api.resend.com"}),
    inbound_secret="signing_secret",
)
