"""Resend (email): its emails API; events signed by Svix."""

from __future__ import annotations

from homing.channels import Channel
from homing.vendors.descriptor import Credential, Vendor

VENDOR = Vendor(
    name="resend",
    title="Resend",
    channel=Channel.EMAIL,
    credentials=(Credential("api_key", secret=True),),
    config=("base_url",),
    hosts=frozenset({"api.resend.com"}),
    inbound_secret="signing_secret",
    # API keys begin ``re_``.
    secret_shapes=(r"re_",),
    demo=1,
)
