"""Paystack and Polar: a verified payment moves the tenant to its plan, once."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import httpx
from sqlalchemy import select

from homing.models import Plan
from homing.services import Services
from homing.store.tables.inbound import inbound_events
from tests.conftest import TenantClient, make_tenant
from tests.inbound.conftest import PAYSTACK_KEY, POLAR_SECRET


def _paystack(tenant_id: str, amount: int = 500000, reference: str = "ref-1", **data: Any) -> bytes:
    body = {
        "event": "charge.success",
        "data": {
            "id": abs(hash(reference)) % 10**9,
            "status": "success",
            "reference": reference,
            "amount": amount,
            "currency": "NGN",
            "paid_at": "2026-05-01T10:00:00Z",
            "metadata": {"tenant_id": tenant_id, "plan": "INDIE"},
            **data,
        },
    }
    return json.dumps(body).encode()


def _paystack_headers(body: bytes, key: str = PAYSTACK_KEY) -> dict[str, str]:
    return {"x-paystack-signature": hmac.new(key.encode(), body, hashlib.sha512).hexdigest()}


def _polar_headers(body: bytes, event_id: str, secret: str = POLAR_SECRET) -> dict[str, str]:
    stamp = str(int(time.time()))
    digest = hmac.new(secret.encode(), f"{event_id}.{stamp}.".encode() + body, hashlib.sha256)
    return {
        "webhook-id": event_id,
        "webhook-timestamp": stamp,
        "webhook-signature": "v1," + base64.b64encode(digest.digest()).decode(),
    }


async def _plan(services: Services, tenant_id: str) -> Plan:
    tenant = await services.tenants.get(tenant_id)
    assert tenant is not None
    return tenant.plan


async def test_paystack_payment_moves_the_tenant_to_its_plan_once(
    api: httpx.AsyncClient, services: Services
) -> None:
    tenant = await make_tenant(services, api, "payer", Plan.FREE)
    body = _paystack(tenant.tenant_id)
    response = await api.post(
        "/inbound/billing/paystack", content=body, headers=_paystack_headers(body)
    )
    assert response.status_code == 200
    assert response.json()["applied"] == 1
    assert await _plan(services, tenant.tenant_id) is Plan.INDIE
    again = await api.post(
        "/inbound/billing/paystack", content=body, headers=_paystack_headers(body)
    )
    assert again.json()["duplicates"] == 1
    async with services.db.transaction() as conn:
        [entry] = (await conn.execute(select(inbound_events))).all()
    assert entry.detail == {
        "plan": "INDIE",
        "amount": 500000,
        "currency": "NGN",
        "reference": "ref-1",
    }
    assert entry.tenant_id == tenant.tenant_id and entry.processed_at is not None


async def test_paystack_bad_signature_is_refused(
    api: httpx.AsyncClient, services: Services
) -> None:
    tenant = await make_tenant(services, api, "payer", Plan.FREE)
    body = _paystack(tenant.tenant_id)
    for headers in (_paystack_headers(body, "sk_test_other"), {}):
        response = await api.post("/inbound/billing/paystack", content=body, headers=headers)
        assert response.status_code == 401
    assert await _plan(services, tenant.tenant_id) is Plan.FREE


async def test_an_underpaid_or_unpriced_payment_is_quarantined(
    api: httpx.AsyncClient, services: Services
) -> None:
    tenant = await make_tenant(services, api, "payer", Plan.FREE)
    cheap = _paystack(tenant.tenant_id, amount=100, reference="cheap")
    dollars = _paystack(tenant.tenant_id, reference="usd", currency="USD")
    for body in (cheap, dollars):
        response = await api.post(
            "/inbound/billing/paystack", content=body, headers=_paystack_headers(body)
        )
        assert response.json()["quarantined"] == 1
    assert await _plan(services, tenant.tenant_id) is Plan.FREE
    async with services.db.transaction() as conn:
        errors = sorted(row.error for row in (await conn.execute(select(inbound_events))).all())
    assert errors == [
        "100 NGN is below the INDIE price of 500000",
        "no price is configured for INDIE in USD",
    ]


async def test_polar_order_paid_moves_the_plan_and_other_events_are_ignored(
    api: httpx.AsyncClient, services: Services
) -> None:
    tenant = await make_tenant(services, api, "payer", Plan.FREE)
    order = {
        "type": "order.paid",
        "timestamp": "2026-05-01T10:00:00Z",
        "data": {
            "id": "ord_1",
            "status": "paid",
            "net_amount": 2900,
            "currency": "usd",
            "metadata": {"tenant_id": tenant.tenant_id, "plan": "STARTUP"},
        },
    }
    body = json.dumps(order).encode()
    forged = await api.post(
        "/inbound/billing/polar", content=body, headers=_polar_headers(body, "e1", "other")
    )
    assert forged.status_code == 401
    response = await api.post(
        "/inbound/billing/polar", content=body, headers=_polar_headers(body, "e1")
    )
    assert response.json()["applied"] == 1
    assert await _plan(services, tenant.tenant_id) is Plan.STARTUP
    other = json.dumps({"type": "checkout.created", "data": {}}).encode()
    response = await api.post(
        "/inbound/billing/polar", content=other, headers=_polar_headers(other, "e2")
    )
    assert response.json()["ignored"] == 1


async def test_an_older_payment_arriving_late_does_not_undo_a_newer_one(
    api: httpx.AsyncClient, services: Services
) -> None:
    tenant = await make_tenant(services, api, "payer", Plan.FREE)

    def order(event_id: str, plan: str, amount: int, when: str, currency: str = "USD") -> bytes:
        data = {
            "id": event_id,
            "net_amount": amount,
            "currency": currency,
            "metadata": {"tenant_id": tenant.tenant_id, "plan": plan},
        }
        return json.dumps({"type": "order.paid", "timestamp": when, "data": data}).encode()

    newer = order("o2", "STARTUP", 2900, "2026-05-02T10:00:00Z")
    older = order("o1", "INDIE", 500000, "2026-05-01T10:00:00Z", "NGN")
    await api.post("/inbound/billing/polar", content=newer, headers=_polar_headers(newer, "n"))
    response = await api.post(
        "/inbound/billing/polar", content=older, headers=_polar_headers(older, "o")
    )
    assert response.json()["ignored"] == 1
    assert await _plan(services, tenant.tenant_id) is Plan.STARTUP


async def test_an_unknown_billing_vendor_is_404(
    api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    assert (await api.post("/inbound/billing/stripe", content=b"{}")).status_code == 404
