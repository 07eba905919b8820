"""A hostile tenant growing its configuration without end: API keys, sending domains
and provider accounts each stop at their bound with 403 ``quota_exceeded`` naming only
the bound, while another tenant still creates freely; deleting one makes room again;
issuing and revoking keys in turn (or adding and deleting providers) never holds more
than the bound; creates racing for the last place store one; a tenant at its bound
makes Homing call no vendor; and each list stays one page of at most the bound. Gone
webhook URLs are marked by receivers, not asked for: past their bound the oldest
marks are dropped, never another tenant's."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.clock import ManualClock
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant, stored_provider
from tests.e2e.conftest import register
from tests.fixtures import settings_for
from tests.webhooks.conftest import deliver, send_webhook
from tests.webhooks.receiver import Receiver, Reply

MAX_KEYS = 3
MAX_DOMAINS = 2
MAX_PROVIDERS = 3
MAX_GONE = 3
# Nothing listens there: a vendor asked at this address answers 422, never 403.
NOWHERE = "http://127.0.0.1:9"


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        max_api_keys_per_tenant=MAX_KEYS,
        max_domains_per_tenant=MAX_DOMAINS,
        max_providers_per_tenant=MAX_PROVIDERS,
        max_gone_endpoints_per_tenant=MAX_GONE,
        webhook_allowed_networks="127.0.0.0/8",
    )


def _refused(response: httpx.Response, detail: str, most: int) -> None:
    """403 ``quota_exceeded`` whose details are the bound and nothing else."""
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["code"] == "quota_exceeded"
    assert error["details"] == {detail: most}


async def _listed(tenant: TenantClient, path: str) -> list[dict[str, Any]]:
    page = (await tenant.get(path)).json()
    assert page["next_cursor"] is None
    data: list[dict[str, Any]] = page["data"]
    return data


async def _provider(tenant: TenantClient, base_url: str, api_key: str) -> httpx.Response:
    body = {
        "channel": "email",
        "provider": "resend",
        "credentials": {"api_key": api_key},
        "config": {"base_url": base_url},
    }
    return await tenant.post("/v1/providers", json=body)


async def test_keys_stop_at_the_bound_and_another_tenant_still_issues(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    for n in range(MAX_KEYS - 1):  # the tenant was made with one
        assert (await tenant.post("/v1/api-keys", json={"name": f"k{n}"})).status_code == 201
    _refused(await tenant.post("/v1/api-keys", json={"name": "more"}), "max_api_keys", MAX_KEYS)
    test_key = await tenant.post("/v1/api-keys", json={"name": "t", "test": True})
    _refused(test_key, "max_api_keys", MAX_KEYS)
    assert len(await _listed(tenant, "/v1/api-keys")) == MAX_KEYS
    other = await make_tenant(services, api, "other")
    for n in range(MAX_KEYS - 1):
        assert (await other.post("/v1/api-keys", json={"name": f"o{n}"})).status_code == 201
    assert tenant.tenant_id not in (await other.post("/v1/api-keys", json={"name": "x"})).text


async def test_revoking_makes_room_and_issue_revoke_cycles_never_pass_the_bound(
    tenant: TenantClient,
) -> None:
    for n in range(MAX_KEYS - 1):
        await tenant.post("/v1/api-keys", json={"name": f"k{n}"})
    for cycle in range(4):
        listed = await _listed(tenant, "/v1/api-keys")
        other = next(k for k in listed if not tenant.key.startswith(k["prefix"]))
        assert (await tenant.delete(f"/v1/api-keys/{other['id']}")).status_code == 204
        issued = await tenant.post("/v1/api-keys", json={"name": f"cycle{cycle}"})
        assert issued.status_code == 201, issued.text
        _refused(await tenant.post("/v1/api-keys", json={"name": "x"}), "max_api_keys", MAX_KEYS)
        assert len(await _listed(tenant, "/v1/api-keys")) == MAX_KEYS


async def test_keys_racing_for_the_last_place_store_one(tenant: TenantClient) -> None:
    for n in range(MAX_KEYS - 2):
        await tenant.post("/v1/api-keys", json={"name": f"k{n}"})
    racing = [tenant.post("/v1/api-keys", json={"name": f"r{n}"}) for n in range(5)]
    statuses = sorted(r.status_code for r in await asyncio.gather(*racing))
    assert statuses == [201, 403, 403, 403, 403]
    assert len(await _listed(tenant, "/v1/api-keys")) == MAX_KEYS


async def test_providers_stop_at_the_bound_before_any_vendor_is_asked(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    for priority in range(MAX_PROVIDERS):
        await register(tenant, sandbox, "resend", priority + 1)
    _refused(await _provider(tenant, NOWHERE, "re_x"), "max_providers", MAX_PROVIDERS)
    listed = await _listed(tenant, "/v1/providers")
    assert len(listed) == MAX_PROVIDERS
    other = await make_tenant(services, api, "other")
    unreachable = await _provider(other, NOWHERE, "re_x")  # below its bound: the vendor is asked
    assert unreachable.status_code == 422, unreachable.text
    assert (await register(other, sandbox, "resend", 1))["id"]
    # Deleting makes room; deleting and adding in turn never holds more.
    for _ in range(3):
        gone = await tenant.delete(f"/v1/providers/{listed[0]['id']}")
        assert gone.status_code == 204
        await register(tenant, sandbox, "resend", 9)
        _refused(await _provider(tenant, NOWHERE, "re_x"), "max_providers", MAX_PROVIDERS)
        listed = await _listed(tenant, "/v1/providers")
        assert len(listed) == MAX_PROVIDERS


async def test_domains_stop_at_the_bound_before_the_provider_is_asked(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    account = await register(tenant, sandbox, "resend", 1)
    for n in range(MAX_DOMAINS):
        body = {"domain": f"d{n}.acme.example", "provider_account_id": account["id"]}
        assert (await tenant.post("/v1/domains", json=body)).status_code == 201
    more = {"domain": "more.acme.example", "provider_account_id": account["id"]}
    _refused(await tenant.post("/v1/domains", json=more), "max_domains", MAX_DOMAINS)
    # Through an account nothing answers for: asked, it would be a 422.
    dead = await stored_provider(services, tenant.tenant_id, base_url=NOWHERE)
    assert dead.config["base_url"] == NOWHERE
    through_dead = {"domain": "dead.acme.example", "provider_account_id": dead.id}
    _refused(await tenant.post("/v1/domains", json=through_dead), "max_domains", MAX_DOMAINS)
    listed = await _listed(tenant, "/v1/domains")
    assert len(listed) == MAX_DOMAINS
    other = await make_tenant(services, api, "other")
    theirs = await register(other, sandbox, "resend", 1)
    first = {"domain": "other.example", "provider_account_id": theirs["id"]}
    assert (await other.post("/v1/domains", json=first)).status_code == 201
    assert (await tenant.delete(f"/v1/domains/{listed[0]['id']}")).status_code == 204
    assert (await tenant.post("/v1/domains", json=more)).status_code == 201
    _refused(await tenant.post("/v1/domains", json=through_dead), "max_domains", MAX_DOMAINS)


async def test_gone_urls_past_the_bound_drop_the_oldest_and_never_another_tenants(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    receiver: Receiver,
    clock: ManualClock,
) -> None:
    receiver.default = Reply(410)
    other = await make_tenant(services, api, "other")
    await send_webhook(other, f"{receiver.url}/theirs")
    await deliver(services)
    for n in range(MAX_GONE + 2):
        clock.advance(1)
        await send_webhook(tenant, f"{receiver.url}/hook{n}")
        await deliver(services)
    gone = await _listed(tenant, "/v1/webhook-endpoints/gone")
    newest = [f"{receiver.url}/hook{n}" for n in reversed(range(2, MAX_GONE + 2))]
    assert [g["url"] for g in gone] == newest
    assert [g["url"] for g in await _listed(other, "/v1/webhook-endpoints/gone")] == [
        f"{receiver.url}/theirs"
    ]
    # A dropped mark only costs a request: the URL is tried again and marked again.
    calls = len(receiver.requests)
    clock.advance(1)
    await send_webhook(tenant, f"{receiver.url}/hook0")
    await deliver(services)
    assert len(receiver.requests) == calls + 1
    gone = await _listed(tenant, "/v1/webhook-endpoints/gone")
    assert [g["url"] for g in gone] == [f"{receiver.url}/hook0", *newest[:-1]]
