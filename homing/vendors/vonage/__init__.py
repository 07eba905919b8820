"""Vonage (SMS): the Messages API; status webhooks signed with a JWT.

Vonage's home (docs/architecture.md, "Adding a vendor"): this descriptor, its adapter
(``adapter.py``, providers layer), its webhook verifier (``verify.py``) and its event
parser (``parse.py``, both inbound layer). Its emulator is the sandbox's own
(``homing/sandbox/vonage.py``), which keeps its own names.
"""

from __future__ import annotations

from homing.channels import Channel
from homing.vendors.descriptor import Credential, Vendor

VENDOR = Vendor(
    name="vonage",
    title="Vonage",
    channel=Channel.SMS,
    credentials=(Credential("api_key", secret=True), Credential("api_secret", secret=True)),
    config=("from", "base_url"),
    # The Messages API, its regional hosts and the Messages sandbox.
    hosts=frozenset(
        {
            "api.nexmo.com",
            "api-eu.vonage.com",
            "api-us.vonage.com",
            "api-ap.vonage.com",
            "messages-sandbox.nexmo.com",
        }
    ),
    inbound_secret="signing_secret",
    # 30 API requests a second per account.
    pacing=(("account", 30, 1),),
)
