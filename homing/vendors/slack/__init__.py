"""Slack (chat): an incoming webhook; it sends no events."""

from __future__ import annotations

from homing.channels import Channel
from homing.vendors.descriptor import ChatAddress, Credential, Vendor

VENDOR = Vendor(
    name="slack",
    title="Slack",
    channel=Channel.CHAT,
    # The webhook URL is the endpoint and a whole credential.
    credentials=(Credential("webhook_url", secret=True),),
    hosts=frozenset({"hooks.slack.com"}),
    endpoint="webhook_url",
    # Its incoming-webhook rate page: one message a second per webhook.
    pacing=(("account", 1, 1),),
    # The channel a webhook posts to, kept as the job's recipient (the webhook itself
    # decides where it goes).
    chat=ChatAddress(
        pattern=r"[#@]?[A-Za-z0-9][A-Za-z0-9._-]{0,79}",
        help="a channel name such as #alerts",
        formats=frozenset({"plain", "markdown"}),
        recipient_field="slack_channel",
    ),
    # An incoming webhook's path: the URL is the credential.
    secret_shapes=(r"hooks\.slack\.com/services/",),
)
