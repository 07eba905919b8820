"""Signed events from the sandbox to a real Homing over HTTP; domains through the sandbox."""

from __future__ import annotations

from typing import Any

import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, make_tenant
from tests.e2e.conftest import Sandbox, deliver, job, register, send

PROVIDERS = ["sendgrid", "resend", "postmark", "mailgun"]


async def _connect(
    tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, provider: str, homing_url: str
) -> tuple[dict[str, Any], str]:
    """Register the sandbox provider and give Homing the sandbox's signing secret."""
    account = await register(tenant, sandbox, provider, 1)
    keys = (await sb.http.get("/_sandbox/keys")).json()
    response = await tenant.api.put(
        f"/v1/providers/{account['id']}/inbound", json=keys[provider], headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    return account, homing_url + response.json()["path"]


async def _event(
    sb: Sandbox, provider: str, kind: str, url: str, to: str = "ada@example.com"
) -> Any:
    response = await sb.http.post(
        "/_sandbox/events",
        json={"provider": provider, "message_to": to, "type": kind, "target_url": url},
    )
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_sandbox_events_are_verified_and_fold_into_the_job(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    homing_url: str,
    provider: str,
) -> None:
    _, url = await _connect(tenant, sandbox, sb, provider, homing_url)
    job_id = await send(tenant)
    assert await deliver(services) == 1
    posted = await _event(sb, provider, "delivered", url)
    assert posted["status"] == 200, posted
    assert posted["response"]["applied"] == 1
    again = await _event(sb, provider, "open", url)
    assert again["response"]["applied"] == 1
    body = await job(tenant, job_id)
    assert body["delivery_status"] == "opened"
    assert [(e["type"], e["provider"]) for e in body["events"]] == [
        ("delivered", provider),
        ("opened", provider),
    ]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_hard_bounce_then_send_is_suppressed_without_a_provider_call(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    homing_url: str,
    provider: str,
) -> None:
    _, url = await _connect(tenant, sandbox, sb, provider, homing_url)
    first = await send(tenant)
    await deliver(services)
    assert (await _event(sb, provider, "bounce", url))["response"]["applied"] == 1
    assert (await job(tenant, first))["delivery_status"] == "bounced"
    second = await send(tenant)
    assert await deliver(services) == 0
    body = await job(tenant, second)
    assert body["status"] == "SUPPRESSED" and body["attempts"] == []
    assert len(await sb.messages(provider)) == 1


async def test_a_soft_bounce_does_not_suppress(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, "resend", homing_url)
    first = await send(tenant)
    await deliver(services)
    await _event(sb, "resend", "soft_bounce", url)
    assert (await job(tenant, first))["delivery_status"] == "deferred"
    second = await send(tenant)
    assert await deliver(services) == 1
    assert (await job(tenant, second))["status"] == "COMPLETED"
    assert len(await sb.messages("resend")) == 2


async def test_the_sandbox_posts_events_after_every_send_when_asked(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, "mailgun", homing_url)
    hook = {"provider": "mailgun", "url": url, "events": ["delivered", "open"]}
    assert (await sb.http.post("/_sandbox/webhooks", json=hook)).status_code == 201
    job_ids = [await send(tenant, to=f"user{n}@example.com") for n in range(3)]
    assert await deliver(services) == 3
    await sandbox.state.drain_posts()
    posted = (await sb.http.get("/_sandbox/events")).json()
    assert [p["status"] for p in posted] == [200] * 6
    for job_id in job_ids:
        assert (await job(tenant, job_id))["delivery_status"] == "opened"


async def test_events_signed_for_one_account_are_refused_at_another(
    services: Services,
    api: Any,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    homing_url: str,
) -> None:
    other = await make_tenant(services, api, "other")
    account = await register(other, sandbox, "resend", 1)
    secret = {"signing_secret": "whsec_b3RoZXItdGVuYW50cy1vd24tc2VjcmV0LTAx"}
    response = await other.api.put(
        f"/v1/providers/{account['id']}/inbound", json=secret, headers=other.headers
    )
    other_url = homing_url + response.json()["path"]
    await _connect(tenant, sandbox, sb, "resend", homing_url)
    await send(tenant)
    await deliver(services)
    refused = await _event(sb, "resend", "bounce", other_url)
    assert refused["status"] == 401


def _credentials(tenant: TenantClient, provider: str) -> dict[str, str]:
    credentials = {"api_key": f"{provider}-key-{tenant.tenant_id[-6:]}"}
    if provider == "mailgun":
        credentials["domain"] = "mg.example.com"
    if provider == "postmark":
        credentials["account_token"] = "postmark-account-token-01"
    return credentials


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_domain_registration_and_verification_through_the_sandbox(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, provider: str
) -> None:
    account = await register(tenant, sandbox, provider, 1, _credentials(tenant, provider))
    assert "postmark-account-token-01" not in str(account)
    created = await tenant.post(
        "/v1/domains", json={"domain": "Acme.Example", "provider_account_id": account["id"]}
    )
    assert created.status_code == 201, created.text
    domain = created.json()
    assert (domain["domain"], domain["status"], domain["provider"]) == (
        "acme.example",
        "pending",
        provider,
    )
    assert domain["records"] and all(r["host"] and r["value"] for r in domain["records"])
    assert any(r["purpose"] == "dkim" for r in domain["records"]) or provider == "sendgrid"
    refused = await tenant.post(
        "/v1/notifications/email",
        json={"to": "ada@example.com", "from": "hi@acme.example", "subject": "s", "text": "t"},
    )
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "domain_not_verified"
    verified = await tenant.post(f"/v1/domains/{domain['id']}/verify")
    assert verified.status_code == 200, verified.text
    assert verified.json()["status"] == "verified"
    assert verified.json()["verified_at"] is not None
    assert await send(tenant, **{"from": "Acme <hi@acme.example>"})
    duplicate = await tenant.post(
        "/v1/domains", json={"domain": "acme.example", "provider_account_id": account["id"]}
    )
    assert duplicate.status_code == 409


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_domain_whose_records_are_missing_stays_unverified(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, provider: str
) -> None:
    account = await register(tenant, sandbox, provider, 1, _credentials(tenant, provider))
    created = await tenant.post(
        "/v1/domains", json={"domain": "unverified.example", "provider_account_id": account["id"]}
    )
    checked = await tenant.post(f"/v1/domains/{created.json()['id']}/verify")
    assert checked.status_code == 200
    assert checked.json()["status"] != "verified"
    listed = (await tenant.get("/v1/domains")).json()["data"]
    assert [d["domain"] for d in listed] == ["unverified.example"]


async def test_postmark_domains_need_the_account_token(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    account = await register(tenant, sandbox, "postmark", 1)
    response = await tenant.post(
        "/v1/domains", json={"domain": "acme.example", "provider_account_id": account["id"]}
    )
    assert response.status_code == 422
    assert "account_token" in response.json()["error"]["message"]
