"""A hostile tenant against multi-channel notifications (docs/notifications.md):
another tenant's recipient or notification id, a flood of channels or the same channel
twice, an unknown strategy, absurd escalation windows, a reused Idempotency-Key and a
test key. Each is refused before anything is stored, and a refusal says nothing of
another tenant's rows."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from homing.services import Services
from homing.store.tables.notifications import notifications
from tests.conftest import TenantClient, make_tenant
from tests.e2e.test_templates import make_template, publish
from tests.feed_helpers import put_recipient

IN_APP = {"title": "Hi", "body": "Hello {{ name }}"}


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    """A tenant that can send: an email and an SMS provider stored (a send no provider
    could deliver is refused at accept)."""
    return await make_tenant(services, api, "acme", provider=True)


async def _ready(tenant: TenantClient) -> None:
    await put_recipient(tenant, "user-1")
    await make_template(tenant, "hello")
    await publish(tenant, "hello", in_app=IN_APP)


def _body(**fields: Any) -> dict[str, Any]:
    body = {
        "recipient": "user-1",
        "template": "hello",
        "data": {"name": "Ann"},
        "channels": ["in_app"],
        "strategy": "all",
    }
    return {**body, **fields}


async def _stored(services: Services) -> int:
    async with services.db.transaction() as conn:
        counted = await conn.execute(select(func.count()).select_from(notifications))
        return int(counted.scalar_one())


async def test_another_tenants_recipient_and_notification_are_not_found(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    await _ready(tenant)
    other = await make_tenant(services, api, "other", provider=True)
    await make_template(other, "hello")
    await publish(other, "hello", in_app=IN_APP)
    refused = await other.post("/v1/notifications", json=_body())
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "unknown_recipient"
    mine = await tenant.post("/v1/notifications", json=_body())
    assert mine.status_code == 202, mine.text
    theirs = await other.get(f"/v1/notifications/{mine.json()['id']}")
    unknown = await other.get("/v1/notifications/no-such-id")
    assert theirs.status_code == unknown.status_code == 404
    assert theirs.json()["error"] == unknown.json()["error"]
    assert await _stored(services) == 1


async def test_a_flood_of_channels_or_a_channel_twice_is_refused_at_once(
    services: Services, tenant: TenantClient
) -> None:
    await _ready(tenant)
    for channels in (
        ["in_app"] * 200_000,
        ["in_app", "in_app"],
        ["in_app", "sms", "email", "chat", "sms"],
        [],
        ["webhook"],
        ["in_app", "x" * 100_000],
    ):
        started = time.perf_counter()
        response = await tenant.post("/v1/notifications", json=_body(channels=channels))
        assert response.status_code in (413, 422), response.text
        assert len(response.content) < 4096
        assert time.perf_counter() - started < 5  # linear, bounded work, not a hang
    assert await _stored(services) == 0


async def test_an_unknown_strategy_and_absurd_windows_are_refused(
    services: Services, tenant: TenantClient
) -> None:
    await _ready(tenant)
    bad: list[dict[str, Any]] = [
        {"strategy": "broadcast"},
        {"strategy": "ALL"},
        {"strategy": None},
        {"strategy": "escalate"},  # no window
        {"strategy": "escalate", "escalate_after_seconds": 0},
        {"strategy": "escalate", "escalate_after_seconds": -5},
        {"strategy": "escalate", "escalate_after_seconds": 10**18},
        {"strategy": "escalate", "escalate_after_seconds": 7 * 86_400 + 1},
        {"strategy": "escalate", "escalate_after_seconds": 1.5},
        {"strategy": "escalate", "escalate_after_seconds": "60"},
        {"strategy": "escalate", "escalate_after_seconds": True},
        {"strategy": "all", "escalate_after_seconds": 60},
        {"channels": ["email"]},  # an email step with no sender
        {"priority": "URGENT"},
    ]
    for fields in bad:
        response = await tenant.post("/v1/notifications", json=_body(**fields))
        assert response.status_code == 422, (fields, response.text)
    assert await _stored(services) == 0


async def test_a_reused_idempotency_key_replays_or_conflicts_and_a_test_key_is_refused(
    services: Services, tenant: TenantClient
) -> None:
    await _ready(tenant)
    key = {"Idempotency-Key": "n-1"}
    first = await tenant.post("/v1/notifications", json=_body(), headers=key)
    again = await tenant.post("/v1/notifications", json=_body(), headers=key)
    assert first.status_code == again.status_code == 202
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    other = await tenant.post("/v1/notifications", json=_body(data={"name": "Bo"}), headers=key)
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_conflict"
    issued = await tenant.post("/v1/api-keys", json={"name": "ci", "test": True})
    assert issued.status_code == 201, issued.text
    test_key = {"Authorization": f"Bearer {issued.json()['key']}"}
    response = await tenant.api.post("/v1/notifications", json=_body(), headers=test_key)
    assert response.status_code == 403
    assert await _stored(services) == 1
