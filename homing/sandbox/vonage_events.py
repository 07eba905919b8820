"""Vonage's Messages API webhooks, as the sandbox sends them: JSON signed with a JWT.

``Authorization: Bearer <HS256 JWT>`` keyed with the signature secret, whose
``payload_hash`` claim is the hex SHA-256 of the body. Written here by hand, apart from
Homing's verifier (the sandbox shares nothing with it). ``KINDS``: the statuses
(submitted, delivered, rejected: the carrier refused the route, undeliverable) and the
inbound keywords (``stop``, ``start``): an inbound message from the recipient to the
sending number, as the Messages API posts it to the application's inbound URL.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from datetime import UTC, datetime
from typing import Any, Final

from homing.sandbox.state import RecordedMessage

KINDS: Final = ("submitted", "delivered", "rejected", "undeliverable", "stop", "start")
_ERRORS: Final = {
    "rejected": {"type": "https://developer.vonage.com/api-errors#1370", "title": "Rejected"},
    "undeliverable": {
        "type": "https://developer.vonage.com/api-errors#1320",
        "title": "Undeliverable",
    },
}


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def jwt(secret: str, claims: dict[str, Any]) -> str:
    """An HS256 JWT of ``claims``."""
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64url(json.dumps(claims).encode())
    mac = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64url(mac)}"


def inbound_body(message: RecordedMessage, word: str) -> dict[str, Any]:
    """The inbound SMS ``word`` from ``message``'s recipient to its sender."""
    return {
        "channel": "sms",
        "message_uuid": str(uuid.uuid4()),
        "to": message.sender.removeprefix("+"),
        "from": (message.to[0] if message.to else "").removeprefix("+"),
        "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "text": word,
        "sms": {"num_messages": "1", "keyword": word},
        "message_type": "text",
    }


def status_body(message: RecordedMessage, kind: str) -> dict[str, Any]:
    """What Vonage posts for ``kind`` about ``message``."""
    if kind in ("stop", "start"):
        return inbound_body(message, kind.upper())
    document: dict[str, Any] = {
        "message_uuid": message.message_id,
        "to": (message.to[0] if message.to else "").removeprefix("+"),
        "from": message.sender,
        "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "status": kind,
        "channel": "sms",
    }
    if message.job_id is not None:
        document["client_ref"] = message.job_id
    if kind in _ERRORS:
        document["error"] = _ERRORS[kind]
    return document


def callback(
    message: RecordedMessage, kind: str, secret: str, at: float | None = None
) -> tuple[bytes, dict[str, str]]:
    """The JSON body and signed headers Vonage posts, signed at ``at`` (default now)."""
    body = json.dumps(status_body(message, kind)).encode()
    claims = {
        "iat": int(time.time() if at is None else at),
        "jti": str(uuid.uuid4()),
        "iss": "Vonage",
        "payload_hash": hashlib.sha256(body).hexdigest(),
    }
    return body, {"Authorization": f"Bearer {jwt(secret, claims)}"}
