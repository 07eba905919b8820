"""A captured Mailgun webhook cannot be posted again, with its body or another one.

Mailgun signs only ``timestamp + token``, not the body, so whoever sees one genuine
webhook (a log, a proxy, a misrouted copy) could, within the five minutes' tolerance,
post it again or graft its signature block onto a forged event: a complaint that
suppresses any address, a bounce, a delivery. Each token is accepted once per
provider account; a reuse is 401 and nothing is applied. Both databases.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from sqlalchemy import func, select

from homing.services import Services
from homing.store.inbound_schema import inbound_events, suppressions
from tests.conftest import TenantClient
from tests.inbound.conftest import connect, mailgun_body


def _event(kind: str, event_id: str, recipient: str, **extra: Any) -> dict[str, Any]:
    return {"event": kind, "id": event_id, "timestamp": 1_800_000_000, "recipient": recipient,
            **extra}  # fmt: skip


async def _count(services: Services, table: Any) -> int:
    async with services.db.transaction() as conn:
        return int((await conn.execute(select(func.count()).select_from(table))).scalar_one())


async def test_a_replayed_mailgun_signature_is_refused_with_any_body(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "mailgun")
    captured = mailgun_body(_event("delivered", "ev-genuine", "ada@example.com"))
    first = await api.post(vendor.path, content=captured)
    assert first.status_code == 200, first.text
    assert await _count(services, inbound_events) == 1

    replayed = await api.post(vendor.path, content=captured)
    assert replayed.status_code == 401, replayed.text

    document = json.loads(captured)
    document["event-data"] = _event("complained", "ev-forged", "victim@example.com")
    grafted = await api.post(vendor.path, content=json.dumps(document).encode())
    assert grafted.status_code == 401, grafted.text
    assert (
        replayed.json()
        == grafted.json()
        == {
            "error": {
                "code": "unauthenticated",
                "message": "the request could not be verified",
                "details": {},
            }
        }
    )

    assert await _count(services, inbound_events) == 1, "a replay reached the journal"
    assert await _count(services, suppressions) == 0, "a forged complaint suppressed"
    # A genuine webhook (Mailgun signs each post with a fresh token) still goes through.
    fresh = mailgun_body(_event("delivered", "ev-next", "ada@example.com"))
    assert (await api.post(vendor.path, content=fresh)).status_code == 200
    assert await _count(services, inbound_events) == 2
