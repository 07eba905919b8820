"""Suppressions, the sending-domain rule, the events report and the dispatch-time guard."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from homing.cli.journal import run_report
from homing.clock import as_datetime
from homing.domain.domain_rows import SendingDomain
from homing.models import DnsRecord, DomainStatus, new_id
from homing.services import Services
from homing.store.tables.inbound import inbound_events
from tests.conftest import TenantClient, make_tenant
from tests.inbound.conftest import add_account, send_email
from tests.store_helpers import pending_count


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    """A tenant that can send: an email and an SMS provider stored (a send no provider
    could deliver is refused at accept)."""
    return await make_tenant(services, api, "acme", provider=True)


async def test_suppressions_can_be_added_listed_and_removed(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    created = await tenant.post("/v1/suppressions", json={"address": "Ada <Ada@Example.com>"})
    assert created.status_code == 201
    assert created.json()["address"] == "ada@example.com"
    again = await tenant.post("/v1/suppressions", json={"address": "ada@example.com"})
    assert again.status_code == 200
    assert (await tenant.post("/v1/suppressions", json={"address": "nobody"})).status_code == 422
    await tenant.post("/v1/suppressions", json={"address": "bob@example.com"})
    page = (await tenant.get("/v1/suppressions", params={"limit": 1})).json()
    assert [e["address"] for e in page["data"]] == ["ada@example.com"]
    rest = (await tenant.get("/v1/suppressions", params={"cursor": page["next_cursor"]})).json()
    assert [e["address"] for e in rest["data"]] == ["bob@example.com"]
    other = await make_tenant(services, api, "other", provider=True)
    assert (await other.get("/v1/suppressions")).json()["data"] == []
    gone = await tenant.delete("/v1/suppressions", params={"address": "ADA@example.com"})
    assert gone.status_code == 204
    missing = await tenant.delete("/v1/suppressions", params={"address": "ada@example.com"})
    assert missing.status_code == 404
    assert (await send_email(tenant, "ada@example.com")).json()["status"] == "PENDING"
    assert (await send_email(tenant, "bob@example.com")).json()["status"] == "SUPPRESSED"


async def test_a_suppression_added_after_accept_stops_the_job_at_dispatch(
    services: Services, tenant: TenantClient
) -> None:
    accepted = await send_email(tenant, "late@example.com")
    job_id = accepted.json()["id"]
    await tenant.post("/v1/suppressions", json={"address": "late@example.com"})
    assert await services.worker().run(once=True) == 1
    job = (await tenant.get(f"/v1/jobs/{job_id}")).json()
    assert job["status"] == "SUPPRESSED"
    assert job["attempts"] == []
    assert await pending_count(services.db) == 0


async def _domain(
    services: Services, tenant: TenantClient, name: str, status: DomainStatus
) -> None:
    account = await add_account(services, tenant.tenant_id, "resend")
    now = datetime.now(UTC)
    record = DnsRecord(type="TXT", host=f"resend._domainkey.{name}", value="p=abc", purpose="dkim")
    await services.domains._store.add(
        SendingDomain(
            id=new_id(),
            tenant_id=tenant.tenant_id,
            provider_account_id=account.id,
            provider="resend",
            domain=name,
            provider_domain_id="d1",
            status=status,
            records=(record,),
            created_at=now,
            updated_at=now,
        )
    )


async def test_a_tenant_with_domains_sends_only_from_verified_ones(
    api: httpx.AsyncClient, services: Services, tenant: TenantClient
) -> None:
    await _domain(services, tenant, "acme.example", DomainStatus.VERIFIED)
    await _domain(services, tenant, "news.acme.example", DomainStatus.PENDING)
    assert (await send_email(tenant)).status_code == 202
    for sender in ("a@news.acme.example", "a@elsewhere.example"):
        refused = await send_email(tenant, **{"from": sender})
        assert refused.status_code == 422
        assert refused.json()["error"]["code"] == "domain_not_verified"
    listed = (await tenant.get("/v1/domains")).json()["data"]
    assert [(d["domain"], d["status"]) for d in listed] == [
        ("acme.example", "verified"),
        ("news.acme.example", "pending"),
    ]
    newcomer = await make_tenant(services, api, "newcomer", provider=True)
    assert (await send_email(newcomer, **{"from": "a@anything.example"})).status_code == 202


async def test_registering_a_domain_needs_an_email_provider_with_a_domain_api(
    services: Services, tenant: TenantClient
) -> None:
    smtp = await add_account(services, tenant.tenant_id, "smtp")
    response = await tenant.post(
        "/v1/domains", json={"domain": "acme.example", "provider_account_id": smtp.id}
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "domains_unsupported"
    bad = await tenant.post(
        "/v1/domains", json={"domain": "not a domain", "provider_account_id": smtp.id}
    )
    assert bad.status_code == 422
    unknown = await tenant.post(
        "/v1/domains", json={"domain": "acme.example", "provider_account_id": "nope"}
    )
    assert unknown.status_code == 404


async def _entries(services: Services, rows: list[dict[str, Any]]) -> None:
    base = {
        "source": "resend",
        "provider_account_id": "acct",
        "body_hash": "h",
        "occurred_at": None,
    }
    async with services.db.transaction() as conn:
        await conn.execute(
            inbound_events.insert(),
            [{**base, "id": new_id(), "event_id": new_id(), **r} for r in rows],
        )


async def test_the_events_report_on_a_known_data_set(
    api: httpx.AsyncClient,
    services: Services,
    tenant: TenantClient,
    capsys: pytest.CaptureFixture[str],
) -> None:
    now = as_datetime(services.clock.now())
    current = now.replace(minute=0, second=0, microsecond=0)
    previous = current - timedelta(hours=1)
    other = await make_tenant(services, api, "other", provider=True)
    mine = {"tenant_id": tenant.tenant_id}
    rows = [
        {
            **mine,
            "event_type": "delivered",
            "status": "applied",
            "received_at": previous + timedelta(seconds=n * 60),
            "occurred_at": previous + timedelta(seconds=n * 60 - n),
        }
        for n in range(1, 21)
    ]
    rows += [
        {
            **mine,
            "event_type": "bounced",
            "status": "applied",
            "received_at": current,
            "occurred_at": current - timedelta(seconds=lag),
        }
        for lag in (60, 120)
    ]
    rows += [
        {**mine, "event_type": None, "status": "quarantined", "received_at": current},
        {
            **mine,
            "event_type": "delivered",
            "status": "applied",
            "received_at": current - timedelta(hours=5),
        },
        {
            "tenant_id": other.tenant_id,
            "event_type": "delivered",
            "status": "applied",
            "received_at": current,
        },
    ]
    await _entries(services, rows)
    report = (await tenant.get("/v1/reports/events", params={"hours": 2})).json()
    figures = [(r["type"], r["count"], r["p95_lag_seconds"], r["errors"]) for r in report["data"]]
    assert figures == [
        ("delivered", 20, 19.0, 0),
        ("bounced", 2, 120.0, 0),
        ("unknown", 1, None, 1),
    ]
    hours = [datetime.fromisoformat(r["hour"].replace("Z", "+00:00")) for r in report["data"]]
    assert hours == [previous, current, current]
    await run_report(services, argparse.Namespace(hours=2, tenant=None))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["type"], r["count"]) for r in lines] == [
        ("delivered", 20),
        ("bounced", 2),
        ("delivered", 1),
        ("unknown", 1),
    ]


async def test_a_batch_refuses_only_the_messages_from_unverified_domains(
    services: Services, tenant: TenantClient
) -> None:
    await _domain(services, tenant, "acme.example", DomainStatus.VERIFIED)
    message = {"to": "ada@example.com", "subject": "Hi", "text": "Hello"}
    batch = {
        "messages": [
            {**message, "from": "hello@acme.example"},
            {**message, "from": "hello@elsewhere.example"},
        ]
    }
    response = await tenant.post("/v1/notifications/email/batch", json=batch)
    assert response.status_code == 202, response.text
    first, second = response.json()["results"]
    assert first["status"] == "PENDING"
    assert second["error"]["code"] == "domain_not_verified"
