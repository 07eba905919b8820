"""The audited changes test_audit_log.py does not walk: sending domains, gone webhook
endpoints, inbound secrets removed, and the dead-letter console's bulk actions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.dead_letter_helpers import dead_letter
from tests.fixtures import settings_for

ADMIN_TOKEN = "admin-token-for-audit-events-0123456789"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(database_url, tmp_path, secret_key, admin_token=ADMIN_TOKEN)


async def _log(client: TenantClient, **params: Any) -> list[dict[str, Any]]:
    response = await client.get("/v1/audit-log", params=params)
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


async def _resend(tenant: TenantClient, sandbox: SandboxServer) -> str:
    body = {
        "channel": "email",
        "provider": "resend",
        "credentials": {"api_key": "re_live_AuditEvents_4242"},
        "config": {"base_url": sandbox.provider_base_url("resend")},
    }
    response = await tenant.post("/v1/providers", json=body)
    assert response.status_code == 201, response.text
    provider_id: str = response.json()["id"]
    return provider_id


async def test_a_domain_added_and_removed_is_recorded_and_verifying_is_not(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    provider_id = await _resend(tenant, sandbox)
    body = {"domain": "acme.example", "provider_account_id": provider_id}
    added = await tenant.post("/v1/domains", json=body)
    assert added.status_code == 201, added.text
    domain_id = added.json()["id"]
    assert (await tenant.post(f"/v1/domains/{domain_id}/verify")).status_code == 200
    assert (await tenant.delete(f"/v1/domains/{domain_id}")).status_code == 204
    removed, created = (await _log(tenant))[:2]
    assert created["action"] == "domain.added" and created["target_id"] == domain_id
    assert created["changes"] == body
    assert removed["action"] == "domain.removed" and removed["target_id"] == domain_id


async def test_removing_an_inbound_secret_is_recorded_once(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    provider_id = await _resend(tenant, sandbox)
    path = f"/v1/providers/{provider_id}/inbound"
    secret = {"signing_secret": "whsec_" + "QXVkaXRFdmVudHNJbmJvdW5kMTIzNDU2Nzg5MA=="}
    put = await tenant.api.put(path, json=secret, headers=tenant.headers)
    assert put.status_code == 200, put.text
    assert (await tenant.delete(path)).status_code == 204
    assert (await tenant.delete(path)).status_code == 404
    actions = [e["action"] for e in await _log(tenant)]
    assert actions == ["inbound_secret.deleted", "inbound_secret.rotated", "provider.added"]


async def test_re_enabling_a_gone_url_records_it_without_its_query(
    services: Services, tenant: TenantClient
) -> None:
    url = "https://hooks.example.com/in?token=receiver-secret-123"
    stored = services.webhooks.normalise_url(url)
    await services.webhooks.store.mark_gone(tenant.tenant_id, stored, "job-1")
    enabled = await tenant.post("/v1/webhook-endpoints/enable", json={"url": url})
    assert enabled.status_code == 204, enabled.text
    (event,) = await _log(tenant)
    assert event["action"] == "webhook_endpoint.enabled"
    assert event["target_id"] == "https://hooks.example.com/in"
    assert "receiver-secret-123" not in str(event)


async def test_bulk_redrive_and_purge_record_one_event_each_and_a_dry_run_none(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    for _ in range(3):
        await dead_letter(services, tenant, provider="ses")
    bulk = {"filter": {"provider": "ses"}}
    dry = await tenant.post("/v1/dead-letters/redrive", json={**bulk, "dry_run": True})
    assert dry.json()["redriven"] == 0
    assert (await tenant.post("/v1/dead-letters/redrive", json=bulk)).json()["redriven"] == 3
    await dead_letter(services, tenant, provider="ses")
    purged = await api.post(
        "/admin/v1/dead-letters/purge",
        json={"filter": {"tenant_id": tenant.tenant_id}},
        headers=ADMIN,
    )
    assert purged.json()["purged"] == 4
    nothing = await tenant.post("/v1/dead-letters/purge", json=bulk)
    assert nothing.json()["purged"] == 0
    by_admin, by_key = await _log(tenant)
    assert by_key["action"] == "dead_letters.redriven"
    assert by_key["actor"]["kind"] == "api_key"
    assert by_key["changes"] == {"filter": {"provider": "ses"}, "ids": None, "redriven": 3}
    assert by_admin["action"] == "dead_letters.purged"
    assert by_admin["actor"] == {"kind": "admin", "id": "admin token", "name": None}
    assert by_admin["changes"]["purged"] == 4
