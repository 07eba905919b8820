"""A captured Mailgun webhook posted again is harmless, and its signature proves no
other body.

Mailgun signs only ``timestamp + token``, not the body, and retries a refused post with
the same signature block for 8 hours, so Homing accepts a signature that old. Whoever
sees one genuine webhook (a log, a proxy, a misrouted copy) may post it again inside
that window, or graft its signature block onto a forged event: a complaint that
suppresses any address, a bounce, a delivery. The same body again is the vendor's retry:
answered 200 as a repeat and applied once. The token with any other body is 401 and
nothing is stored. The same event id under a fresh signature with another body is kept
as a conflict, never applied. A signature older than the window is refused. Both
databases.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from homing.services import Services
from homing.store.tables.inbound import inbound_conflicts, inbound_events, suppressions
from homing.vendors.mailgun.verify import MAX_AGE_SECONDS
from tests.conftest import TenantClient
from tests.inbound.conftest import MAILGUN_KEY, connect, mailgun_body

pytestmark = pytest.mark.sql("a replay decided by the nonce table's unique key")

UNVERIFIED = {
    "error": {
        "code": "unauthenticated",
        "message": "the request could not be verified",
        "details": {},
    }
}


def _event(kind: str, event_id: str, recipient: str, **extra: Any) -> dict[str, Any]:
    return {"event": kind, "id": event_id, "timestamp": 1_800_000_000, "recipient": recipient,
            **extra}  # fmt: skip


def _bounce(event_id: str, recipient: str) -> dict[str, Any]:
    return _event("failed", event_id, recipient, severity="permanent", reason="bounce")


def _signed_at(event_data: dict[str, Any], stamp: int) -> bytes:
    token = secrets.token_hex(25)
    digest = hmac.new(MAILGUN_KEY.encode(), f"{stamp}{token}".encode(), hashlib.sha256)
    signature = {"timestamp": str(stamp), "token": token, "signature": digest.hexdigest()}
    return json.dumps({"signature": signature, "event-data": event_data}).encode()


async def _count(services: Services, table: Any) -> int:
    async with services.db.transaction() as conn:
        return int((await conn.execute(select(func.count()).select_from(table))).scalar_one())


async def test_a_replayed_mailgun_body_is_applied_once_and_its_token_proves_no_other(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "mailgun")
    captured = mailgun_body(_event("complained", "ev-genuine", "ada@example.com"))
    first = await api.post(vendor.path, content=captured)
    assert first.status_code == 200, first.text
    assert await _count(services, inbound_events) == 1

    for _ in range(3):
        replayed = await api.post(vendor.path, content=captured)
        assert replayed.status_code == 200, replayed.text
        assert replayed.json()["duplicates"] == 1 and replayed.json()["received"] == 1

    document = json.loads(captured)
    document["event-data"] = _event("complained", "ev-forged", "victim@example.com")
    grafted = await api.post(vendor.path, content=json.dumps(document).encode())
    assert grafted.status_code == 401, grafted.text
    assert grafted.json() == UNVERIFIED
    document["event-data"] = _event("complained", "ev-genuine", "victim@example.com")
    same_id = await api.post(vendor.path, content=json.dumps(document).encode())
    assert same_id.status_code == 401, "the captured token grafted onto the same event id"

    assert await _count(services, inbound_events) == 1, "a replay or a graft was journaled"
    assert await _count(services, suppressions) == 0, "a forged complaint suppressed"
    # A genuine webhook (Mailgun signs each post with a fresh token) still goes through.
    fresh = mailgun_body(_event("delivered", "ev-next", "ada@example.com"))
    assert (await api.post(vendor.path, content=fresh)).status_code == 200
    assert await _count(services, inbound_events) == 2


async def test_the_same_event_id_with_another_body_is_kept_as_a_conflict(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "mailgun")
    original = mailgun_body(_event("delivered", "ev-1", "ada@example.com"))
    assert (await api.post(vendor.path, content=original)).status_code == 200
    changed = mailgun_body(_bounce("ev-1", "victim@example.com"))
    response = await api.post(vendor.path, content=changed)
    assert response.status_code == 200, response.text
    assert response.json()["conflicts"] == 1 and response.json()["applied"] == 0
    assert await _count(services, inbound_conflicts) == 1
    assert await _count(services, suppressions) == 0, "a conflicting body was applied"


async def test_a_signature_older_than_mailguns_retry_window_is_refused(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "mailgun")
    now = int(time.time())
    stale = _signed_at(_bounce("ev-old", "ada@example.com"), now - MAX_AGE_SECONDS - 120)
    assert (await api.post(vendor.path, content=stale)).json() == UNVERIFIED
    ahead = _signed_at(_bounce("ev-ahead", "ada@example.com"), now + 600)
    assert (await api.post(vendor.path, content=ahead)).json() == UNVERIFIED
    assert await _count(services, inbound_events) == 0
    # Inside the window (Mailgun's last retry comes about 7.5 hours after the first
    # attempt), the first signature is still taken.
    retried = _signed_at(_bounce("ev-late", "ada@example.com"), now - 8 * 3600)
    response = await api.post(vendor.path, content=retried)
    assert response.status_code == 200, response.text
    assert response.json()["received"] == 1
    assert await _count(services, inbound_events) == 1
