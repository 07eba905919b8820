"""Event bodies as each vendor posts them, for a message the sandbox accepted.

``KINDS`` is what ``POST /_sandbox/events`` accepts: delivered, bounce (hard),
soft_bounce, deferred, complaint, open, click. Each builder returns the raw body and
the signing headers, made exactly the vendor's way (``homing.sandbox.signing``).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

from homing.sandbox.signing import (
    SandboxKeys,
    basic_auth_header,
    mailgun_signature,
    sendgrid_headers,
    svix_headers,
)
from homing.sandbox.state import RecordedMessage

KINDS: Final = ("delivered", "bounce", "soft_bounce", "deferred", "complaint", "open", "click")
LINK: Final = "https://example.com/welcome"
Signed = tuple[bytes, dict[str, str]]


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


_SENDGRID: Final[dict[str, dict[str, Any]]] = {
    "delivered": {"event": "delivered", "response": "250 OK"},
    "bounce": {
        "event": "bounce",
        "type": "bounce",
        "status": "5.1.1",
        "reason": "550 5.1.1 unknown user",
    },
    "soft_bounce": {
        "event": "bounce",
        "type": "blocked",
        "status": "4.2.2",
        "reason": "452 mailbox full",
    },
    "deferred": {"event": "deferred", "response": "421 try again later", "attempt": "1"},
    "complaint": {"event": "spamreport"},
    "open": {"event": "open", "useragent": "Mozilla/5.0", "ip": "192.0.2.1"},
    "click": {"event": "click", "url": LINK, "useragent": "Mozilla/5.0", "ip": "192.0.2.1"},
}


def sendgrid(message: RecordedMessage, kind: str, keys: SandboxKeys, now: datetime) -> Signed:
    """A one-event array; custom args (``hjid``) flattened to the top level."""
    event = {
        "hjid": message.job_id,
        "email": message.to[0],
        "timestamp": int(now.timestamp()),
        "sg_event_id": secrets.token_urlsafe(16),
        "sg_message_id": f"{message.message_id}.filterdrecv-sandbox-0",
        "smtp-id": f"<{message.message_id}@sandbox.sendgrid.net>",
        **_SENDGRID[kind],
    }
    body = _dumps([event]) + b"\r\n"
    return body, sendgrid_headers(keys, body, int(now.timestamp()))


_RESEND: Final[dict[str, tuple[str, dict[str, Any] | None]]] = {
    "delivered": ("email.delivered", None),
    "bounce": (
        "email.bounced",
        {"type": "Permanent", "subType": "General", "message": "550 5.1.1"},
    ),
    "soft_bounce": (
        "email.bounced",
        {"type": "Transient", "subType": "MailboxFull", "message": "452"},
    ),
    "deferred": ("email.delivery_delayed", None),
    "complaint": ("email.complained", None),
    "open": ("email.opened", None),
    "click": ("email.clicked", None),
}


def resend(message: RecordedMessage, kind: str, keys: SandboxKeys, now: datetime) -> Signed:
    """One event; ``data.tags`` is an object, unlike the request's list."""
    kind_name, bounce = _RESEND[kind]
    data: dict[str, Any] = {
        "email_id": message.message_id,
        "created_at": _iso(message.received_at),
        "from": message.sender,
        "to": list(message.to),
        "subject": message.subject,
        "tags": {"hjid": message.job_id} if message.job_id else {},
    }
    if bounce:
        data["bounce"] = bounce
    if kind == "click":
        data["click"] = {"link": LINK, "ipAddress": "192.0.2.1", "timestamp": _iso(now)}
    body = _dumps({"type": kind_name, "created_at": _iso(now), "data": data})
    msg_id = "msg_" + secrets.token_urlsafe(18)
    return body, svix_headers(keys.resend_secret, body, msg_id, int(now.timestamp()))


_POSTMARK_BOUNCES: Final = {
    "bounce": ("HardBounce", 1, True),
    "soft_bounce": ("SoftBounce", 4096, False),
    "deferred": ("Transient", 2, False),
    "complaint": ("SpamComplaint", 512, True),
}


def _postmark_record(message: RecordedMessage, kind: str, when: str) -> dict[str, Any]:
    if kind in _POSTMARK_BOUNCES:
        kind_name, code, inactive = _POSTMARK_BOUNCES[kind]
        record = "SpamComplaint" if kind == "complaint" else "Bounce"
        return {
            "RecordType": record,
            "ID": secrets.randbelow(10**10),
            "Type": kind_name,
            "TypeCode": code,
            "Email": message.to[0],
            "From": message.sender,
            "BouncedAt": when,
            "Inactive": inactive,
            "Subject": message.subject,
        }
    if kind == "delivered":
        return {"RecordType": "Delivery", "Recipient": message.to[0], "DeliveredAt": when}
    extra = {"FirstOpen": True} if kind == "open" else {"OriginalLink": LINK}
    record = "Open" if kind == "open" else "Click"
    return {"RecordType": record, "Recipient": message.to[0], "ReceivedAt": when, **extra}


def postmark(message: RecordedMessage, kind: str, auth: tuple[str, str], now: datetime) -> Signed:
    """One record, no signature: HTTP Basic with the webhook's credentials."""
    document = {
        **_postmark_record(message, kind, _iso(now)),
        "MessageID": message.message_id,
        "ServerID": 1,
        "MessageStream": "outbound",
        "Tag": "",
        "Metadata": {"hjid": message.job_id} if message.job_id else {},
    }
    return _dumps(document), basic_auth_header(*auth)


_MAILGUN: Final[dict[str, dict[str, Any]]] = {
    "delivered": {"event": "delivered", "delivery-status": {"code": 250, "message": "OK"}},
    "bounce": {
        "event": "failed",
        "severity": "permanent",
        "reason": "bounce",
        "delivery-status": {"code": 550, "message": "5.1.1 mailbox does not exist"},
    },
    "soft_bounce": {
        "event": "failed",
        "severity": "temporary",
        "reason": "generic",
        "delivery-status": {"code": 452, "message": "4.2.2 mailbox full", "retry-seconds": 600},
    },
    "complaint": {"event": "complained"},
    "open": {"event": "opened"},
    "click": {"event": "clicked", "url": LINK},
}
_MAILGUN["deferred"] = _MAILGUN["soft_bounce"]


def mailgun(message: RecordedMessage, kind: str, keys: SandboxKeys, now: datetime) -> Signed:
    """``{"signature", "event-data"}``; the message id loses its angle brackets."""
    data = {
        "id": secrets.token_urlsafe(16),
        "timestamp": now.timestamp(),
        "recipient": message.to[0],
        "message": {
            "headers": {
                "message-id": message.message_id.strip("<>"),
                "from": message.sender,
                "to": message.to[0],
                "subject": message.subject,
            }
        },
        "user-variables": {"hjid": message.job_id} if message.job_id else {},
        "tags": [],
        **_MAILGUN[kind],
    }
    signature = mailgun_signature(keys.mailgun_signing_key, int(now.timestamp()))
    return _dumps({"signature": signature, "event-data": data}), {}


Builder = Callable[[RecordedMessage, str, SandboxKeys, datetime], Signed]
SIGNED_BUILDERS: Final[dict[str, Builder]] = {
    "sendgrid": sendgrid,
    "resend": resend,
    "mailgun": mailgun,
}


def build(
    provider: str,
    message: RecordedMessage,
    kind: str,
    keys: SandboxKeys,
    auth: tuple[str, str] | None = None,
    at: float | None = None,
) -> Signed:
    """The body and headers ``provider`` would post for ``kind`` about ``message``,
    signed at ``at`` (epoch seconds; default now)."""
    now = datetime.now(UTC) if at is None else datetime.fromtimestamp(at, UTC)
    if provider == "postmark":
        return postmark(
            message, kind, auth or (keys.postmark_username, keys.postmark_password), now
        )
    return SIGNED_BUILDERS[provider](message, kind, keys, now)
