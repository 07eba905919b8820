"""SendGrid (email): the v3 Mail Send API; events signed with ECDSA."""

from __future__ import annotations

from homing.channels import Channel
from homing.vendors.descriptor import Credential, Vendor

VENDOR = Vendor(
    name="sendgrid",
    title="SendGrid",
    channel=Channel.EMAIL,
    credentials=(Credential("api_key", secret=True),),
    config=("region", "base_url"),
    hosts=frozenset({"api.sendgrid.com", "api.eu.sendgrid.com"}),
    inbound_secret="verification_key",
    # Its own headers on every message it sends; API keys begin ``SG.``.
    owned_headers=frozenset({"x-sg-id", "x-sg-eid"}),
    secret_shapes=(r"SG\.",),
    demo=2,
)
