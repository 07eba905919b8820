"""Events per body and per account-minute are capped before anything is journaled,
on SQLite and PostgreSQL; a body is journaled in few transactions and each event
applied once."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from homing.clock import ManualClock
from homing.services import Services
from homing.settings import Settings
from homing.store import inbound as inbound_store
from homing.store.tables.inbound import inbound_events
from tests.admission_helpers import unique_prefix
from tests.conftest import REDIS_URL, TenantClient, make_tenant
from tests.inbound.conftest import connect, mailgun_body, send_email


@pytest.fixture(params=["memory", "redis"])
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """Small limits, with the windows in process memory or shared in Redis."""
    limits: dict[str, Any] = {"inbound_max_events_per_body": 4, "inbound_events_per_minute": 6}
    if request.param == "redis":
        limits.update(redis_url=REDIS_URL, redis_key_prefix=unique_prefix())
    return settings.changed(**limits)


def _batch(*event_ids: str, **fields: Any) -> bytes:
    return json.dumps([{"event": "open", "sg_event_id": i, **fields} for i in event_ids]).encode()


async def _journaled(services: Services) -> int:
    async with services.db.transaction() as conn:
        query = select(func.count()).select_from(inbound_events)
        return int((await conn.execute(query)).scalar_one())


async def test_a_body_over_the_event_cap_is_413_and_nothing_is_journaled(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "sendgrid")
    body = _batch("a", "b", "c", "d", "e")
    response = await api.post(vendor.path, content=body, headers=vendor.sign(body))
    assert response.status_code == 413
    assert response.json()["error"]["details"] == {"events": 5, "max_events": 4}
    assert await _journaled(services) == 0
    body = _batch("a", "b", "c", "d")
    assert (await api.post(vendor.path, content=body, headers=vendor.sign(body))).status_code == 200


async def test_an_account_over_its_events_per_minute_is_429_whole_and_alone(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "sendgrid")
    first = _batch("a", "b", "c", "d")
    assert (
        await api.post(vendor.path, content=first, headers=vendor.sign(first))
    ).status_code == 200
    second = _batch("e", "f", "g")
    refused = await api.post(vendor.path, content=second, headers=vendor.sign(second))
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1
    assert refused.json()["error"]["code"] == "rate_limited"
    assert await _journaled(services) == 4, "the refused body was partly journaled"
    other = await connect(services, await make_tenant(services, api, "other"), "sendgrid")
    assert (
        await api.post(other.path, content=second, headers=other.sign(second))
    ).status_code == 200


# In memory only: the Redis window runs on Redis's clock, which the test cannot move.
@pytest.mark.parametrize("settings", ["memory"], indirect=True)
async def test_a_mailgun_post_refused_with_429_is_taken_when_mailgun_retries_it(
    api: httpx.AsyncClient,
    services: Services,
    tenant: TenantClient,
    settings: Settings,
    clock: ManualClock,
) -> None:
    """The token is claimed with the journal, not before: Homing's 429 leaves it unused,
    and Mailgun's retry (the same signed body) is taken once the window has room."""
    vendor = await connect(services, tenant, "mailgun")
    for n in range(6):
        body = mailgun_body({"event": "opened", "id": f"ev-{n}", "recipient": "a@example.com"})
        assert (await api.post(vendor.path, content=body)).status_code == 200
    late = mailgun_body({"event": "opened", "id": "ev-late", "recipient": "a@example.com"})
    assert (await api.post(vendor.path, content=late)).status_code == 429
    assert await _journaled(services) == 6
    clock.advance(61)
    retried = await api.post(vendor.path, content=late)
    assert retried.status_code == 200, retried.text
    assert retried.json()["received"] == 1 and retried.json()["duplicates"] == 0
    assert await _journaled(services) == 7
    again = await api.post(vendor.path, content=late)
    assert again.json()["duplicates"] == 1, "a second retry is a repeat, not a second event"


async def test_an_event_repeated_within_one_body_is_applied_once(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    vendor = await connect(services, tenant, "sendgrid")
    job_id = (await send_email(tenant)).json()["id"]
    body = _batch("same", "same", "other", hjid=job_id, timestamp=1)
    response = await api.post(vendor.path, content=body, headers=vendor.sign(body))
    assert response.json() == {
        "received": 3,
        "applied": 2,
        "ignored": 0,
        "quarantined": 0,
        "duplicates": 1,
        "conflicts": 0,
    }
    events = (await tenant.get(f"/v1/jobs/{job_id}")).json()["events"]
    assert len(events) == 2


async def test_repeats_across_journal_transactions_apply_once_and_conflicts_are_kept(
    api: httpx.AsyncClient,
    services: Services,
    tenant: TenantClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(inbound_store, "JOURNAL_BATCH", 2)
    vendor = await connect(services, tenant, "sendgrid")
    job_id = (await send_email(tenant)).json()["id"]
    events = [
        {"event": "open", "sg_event_id": "a", "hjid": job_id, "timestamp": 1},
        {"event": "open", "sg_event_id": "b", "hjid": job_id, "timestamp": 2},
        {"event": "open", "sg_event_id": "a", "hjid": job_id, "timestamp": 1},
        {"event": "click", "sg_event_id": "b", "hjid": job_id, "timestamp": 2},
    ]
    body = json.dumps(events).encode()
    response = await api.post(vendor.path, content=body, headers=vendor.sign(body))
    assert response.json() == {
        "received": 4,
        "applied": 2,
        "ignored": 0,
        "quarantined": 0,
        "duplicates": 1,
        "conflicts": 1,
    }
    assert len((await tenant.get(f"/v1/jobs/{job_id}")).json()["events"]) == 2
