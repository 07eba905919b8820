"""Telegram (chat): the Bot API; updates carry the setWebhook secret token."""

from __future__ import annotations

from homing.channels import Channel
from homing.vendors.descriptor import ChatAddress, Credential, Vendor

VENDOR = Vendor(
    name="telegram",
    title="Telegram",
    channel=Channel.CHAT,
    # A bot token is a whole credential.
    credentials=(Credential("bot_token", secret=True),),
    config=("base_url",),
    hosts=frozenset({"api.telegram.org"}),
    inbound_secret="secret_token",
    # The bot FAQ, "Broadcasting to users": about one message a second per chat, 20 a
    # minute per group, 30 a second in bulk.
    pacing=(("account", 30, 1), ("individual", 1, 1), ("group", 20, 60)),
    # A numeric chat id (negative for groups and channels) or a public
    # ``@channelusername`` (5 to 32 characters, case-insensitive).
    chat=ChatAddress(
        pattern=r"-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31}",
        help="a numeric chat id or an @channel name",
        fold_at_names=True,
        recipient_field="telegram_chat_id",
    ),
    # A bot token's secret part: it sits in the Bot API's URL path.
    secret_shapes=(r"bot[0-9]{1,20}:",),
)
