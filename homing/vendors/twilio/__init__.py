"""Twilio (SMS): the Messages API; status callbacks signed over the URL."""

from __future__ import annotations

from homing.channels import Channel
from homing.vendors.descriptor import Credential, Vendor

VENDOR = Vendor(
    name="twilio",
    title="Twilio",
    channel=Channel.SMS,
    credentials=(Credential("account_sid"), Credential("auth_token", secret=True)),
    config=("from", "base_url"),
    hosts=frozenset({"api.twilio.com"}),
    inbound_secret="signing_secret",
    # Its concurrency limit (error 20429), as an account rate.
    pacing=(("account", 100, 1),),
)
