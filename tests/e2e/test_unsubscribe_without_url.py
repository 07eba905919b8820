"""Without HOMING_PUBLIC_URL a marketing email has no link to carry: 422
``public_url_required``, for a single send and a batch's item, on SQLite and
PostgreSQL; a transactional one still goes."""

from __future__ import annotations

import httpx
import pytest

from homing.services import Services
from tests.conftest import TenantClient, make_tenant
from tests.e2e.test_recipients import email_by_recipient, put_category, put_recipient


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    """A tenant that can send: an email and an SMS provider stored (a send no provider
    could deliver is refused at accept)."""
    return await make_tenant(services, api, "acme", provider=True)


async def test_a_marketing_email_without_a_public_url_is_refused(tenant: TenantClient) -> None:
    await put_category(tenant, "digest", kind="marketing", default={"email": True})
    await put_category(tenant, "receipts")
    await put_recipient(tenant, "user-1", email="ada@example.com")
    for to in ({"to": "ada@example.com"}, {"recipient": "user-1"}):
        response = await email_by_recipient(tenant, category="digest", **to)
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "public_url_required"
    transactional = await email_by_recipient(tenant, recipient="user-1", category="receipts")
    assert transactional.status_code == 202, transactional.text


async def test_a_batch_refuses_only_its_marketing_items(tenant: TenantClient) -> None:
    await put_category(tenant, "digest", kind="marketing", default={"email": True})
    message = {"from": "Acme <hello@acme.example>", "subject": "Hi", "text": "Hello"}
    items = [
        {**message, "to": "ada@example.com", "category": "digest"},
        {**message, "to": "grace@example.com"},
    ]
    response = await tenant.post("/v1/notifications/email/batch", json={"messages": items})
    assert response.status_code == 202, response.text
    first, second = response.json()["results"]
    assert first["error"]["code"] == "public_url_required"
    assert second["status"] == "PENDING"


async def test_the_preference_link_needs_a_public_url(tenant: TenantClient) -> None:
    await put_recipient(tenant, "user-2", email="ada@example.com")
    response = await tenant.get("/v1/recipients/user-2/preference-link")
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "public_url_required"
