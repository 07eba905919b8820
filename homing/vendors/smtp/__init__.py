"""SMTP (email): any submission server; it sends no events."""

from __future__ import annotations

from homing.channels import Channel
from homing.vendors.descriptor import Credential, Vendor

VENDOR = Vendor(
    name="smtp",
    title="SMTP",
    channel=Channel.EMAIL,
    # An open relay on a private network needs no username, password or STARTTLS.
    credentials=(
        Credential("host"),
        Credential("port"),
        Credential("username", required=False),
        Credential("password", required=False, secret=True),
        Credential("starttls", required=False, flag=True),
    ),
    endpoint="mail_server",
)
