"""A webhook job's payload: what is stored at acceptance and read back at delivery.

The body is stored as the exact JSON text that will be sent and signed, so every
retry sends the same bytes. The tenant's own headers may carry credentials for the
receiving endpoint, so they are stored sealed (bound to the tenant).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

from homing.crypto import Sealer
from homing.models import WebhookPayload
from homing.webhooks.signing import SIGNATURE_HEADERS

__all__ = [
    "EVENT_TYPE_HEADER",
    "RESERVED_HEADERS",
    "WebhookMessage",
    "header_problem",
    "read_message",
    "write_message",
]

EVENT_TYPE_HEADER = "X-Webhook-Event"

# Names a tenant may not set (compared in lower case): the signature and id headers,
# the ones Homing derives from the body, and hop-by-hop ones.
RESERVED_HEADERS = SIGNATURE_HEADERS | {
    EVENT_TYPE_HEADER.lower(),
    "content-type",
    "content-length",
    "content-encoding",
    "transfer-encoding",
    "host",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "expect",
    "proxy-authorization",
    "proxy-connection",
}

MAX_HEADER_NAME = 100
MAX_HEADER_VALUE = 4096
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VALUE = re.compile(r"[\t\x20-\x7e]*")
_HEADERS_TABLE = "jobs"
_HEADERS_FIELD = "webhook_headers"
# (table, field) the sealed headers are bound to, with the tenant id as the row.
HEADERS_BINDING = (_HEADERS_TABLE, _HEADERS_FIELD)


def header_problem(name: str, value: str) -> str | None:
    """Why a tenant header cannot be sent, or None when it can."""
    # Lengths are checked before any pattern runs, and the name is quoted cut short.
    if len(name) > MAX_HEADER_NAME or not _TOKEN.fullmatch(name):
        return f"header name {name[:MAX_HEADER_NAME]!r} is not a valid HTTP token"
    if name.lower() in RESERVED_HEADERS:
        return f"header {name!r} is set by Homing and cannot be given"
    if len(value) > MAX_HEADER_VALUE or not _VALUE.fullmatch(value):
        return f"header {name!r} needs a value of at most 4096 printable ASCII characters"
    return None


@dataclass(frozen=True, slots=True)
class WebhookMessage:
    """One webhook a job sends: URL, body, headers and event type."""

    url: str
    body: bytes
    headers: dict[str, str] = field(repr=False)
    event_type: str | None = None


def write_message(
    sealer: Sealer,
    tenant_id: str,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    event_type: str | None,
) -> WebhookPayload:
    """The job payload for one webhook (see the module docstring)."""
    sealed = None
    if headers:
        sealed = sealer.seal(
            orjson.dumps(dict(headers)),
            table=_HEADERS_TABLE,
            row_id=tenant_id,
            field=_HEADERS_FIELD,
        )
    return {
        "url": url,
        "body": body.decode(),
        "headers_sealed": sealed,
        "event_type": event_type,
    }


def read_message(sealer: Sealer, tenant_id: str, payload: WebhookPayload) -> WebhookMessage:
    """The message of a job payload written by ``write_message``."""
    headers: dict[str, str] = {}
    sealed = payload.get("headers_sealed")
    if sealed:
        plaintext = sealer.open(
            sealed,
            table=_HEADERS_TABLE,
            row_id=tenant_id,
            field=_HEADERS_FIELD,
        )
        headers = orjson.loads(plaintext)
    return WebhookMessage(
        url=payload["url"],
        body=str(payload["body"]).encode(),
        headers=headers,
        event_type=payload.get("event_type"),
    )
