"""Twilio's posts back, as the sandbox sends them: status callbacks and inbound messages.

Both are form-encoded and signed with ``X-Twilio-Signature``: base64 HMAC-SHA1, keyed
with the auth token, of the URL followed by every field's name and value in the order
of the names. ``KINDS``: the statuses a callback reports (delivered, undelivered with
30007 carrier filtering or 30008 unknown, failed, sent) and the inbound keywords
(``stop``, ``start``), which arrive as a message from the recipient.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid
from typing import Final
from urllib.parse import urlencode

from homing.sandbox.state import RecordedMessage

KINDS: Final = (
    "delivered",
    "undelivered",
    "undelivered_unknown",
    "failed",
    "sent",
    "stop",
    "start",
)
_STATUS: Final = {
    "delivered": ("delivered", None),
    "undelivered": ("undelivered", "30007"),
    "undelivered_unknown": ("undelivered", "30008"),
    "failed": ("failed", "30005"),
    "sent": ("sent", None),
}


def sign(auth_token: str, url: str, fields: dict[str, str]) -> str:
    """The ``X-Twilio-Signature`` of a post of ``fields`` to ``url``."""
    signed = url + "".join(name + fields[name] for name in sorted(fields))
    digest = hmac.new(auth_token.encode(), signed.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def fields_for(message: RecordedMessage, kind: str) -> dict[str, str]:
    """What Twilio posts for ``kind`` about ``message``."""
    to = message.to[0] if message.to else ""
    if kind in ("stop", "start"):
        return {
            "MessageSid": "SM" + uuid.uuid4().hex,
            "AccountSid": "AC" + "0" * 32,
            "From": to,
            "To": message.sender,
            "Body": kind.upper(),
            "NumMedia": "0",
        }
    status, error = _STATUS[kind]
    fields = {
        "MessageSid": message.message_id,
        "SmsSid": message.message_id,
        "AccountSid": "AC" + "0" * 32,
        "MessageStatus": status,
        "SmsStatus": status,
        "To": to,
        "From": message.sender,
        "ApiVersion": "2010-04-01",
    }
    if error is not None:
        fields["ErrorCode"] = error
    return fields


def callback(
    message: RecordedMessage, kind: str, auth_token: str, url: str
) -> tuple[bytes, dict[str, str]]:
    """The form body and headers Twilio posts to ``url``."""
    fields = fields_for(message, kind)
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Twilio-Signature": sign(auth_token, url, fields),
    }
    return urlencode(fields).encode(), headers
