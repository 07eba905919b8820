"""Postmark (email): its email API; webhooks behind HTTP basic auth."""

from __future__ import annotations

from homing.channels import Channel
from homing.vendors.descriptor import Credential, Vendor

VENDOR = Vendor(
    name="postmark",
    title="Postmark",
    channel=Channel.EMAIL,
    credentials=(
        Credential("api_key", secret=True),
        # Sending domains need the account token: as secret as the server token.
        Credential("account_token", required=False, secret=True),
    ),
    config=("message_stream", "base_url"),
    hosts=frozenset({"api.postmarkapp.com"}),
    inbound_secret="basic_auth",
)
