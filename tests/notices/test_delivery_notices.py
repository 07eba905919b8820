"""Notices the worker's outcomes raise, through the sandbox: a provider that refuses an
account's credentials (even when a fallback delivers the job) marks the account and tells
the tenant once; a re-check clears the mark; a webhook URL answering 410 is noticed as
``endpoint.disabled``."""

from __future__ import annotations

import json
from typing import Any

import standardwebhooks

from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, deliver, job
from tests.e2e.conftest import register, send
from tests.fixtures import Sandbox
from tests.webhooks.conftest import create_secret, send_webhook
from tests.webhooks.receiver import Receiver, Reply

CONTACT = "ops@acme.example"


async def _targets(tenant: TenantClient, receiver: Receiver) -> str:
    secret = await create_secret(tenant)
    response = await tenant.patch(
        "/v1/settings", json={"contact_email": CONTACT, "operations_url": receiver.url + "/ops"}
    )
    assert response.status_code == 200, response.text
    return secret


async def _provider(tenant: TenantClient, account_id: str) -> dict[str, Any]:
    listed = (await tenant.get("/v1/providers")).json()["data"]
    [account] = [a for a in listed if a["id"] == account_id]
    return account


def _ops(receiver: Receiver) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in receiver.requests if r.path == "/ops"]


async def test_rejected_credentials_mark_the_account_and_tell_the_tenant_once(
    services: Services,
    tenant: TenantClient,
    platform: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    receiver: Receiver,
) -> None:
    secret = await _targets(tenant, receiver)
    resend = await register(tenant, sandbox, "resend", 1)
    await register(tenant, sandbox, "mailgun", 2)
    await sb.fault("resend", status=401)
    first, second = await send(tenant), await send(tenant)
    await deliver(services)
    await deliver(services)  # the notice's webhook and email, queued beside the loop
    for job_id in (first, second):
        assert (await job(tenant, job_id))["status"] == "COMPLETED"  # the fallback sent it

    account = await _provider(tenant, resend["id"])
    assert account["credentials_rejected"] is True
    assert account["credentials_rejected_at"] is not None
    [notice] = _ops(receiver)
    assert notice["type"] == "provider.credentials_rejected"
    assert notice["data"]["provider_account_id"] == resend["id"]
    assert notice["data"]["provider"] == "resend"
    [request] = [r for r in receiver.requests if r.path == "/ops"]
    standardwebhooks.Webhook(secret).verify(request.body, request.headers)
    mails = [m for m in await sb.messages("sendgrid") if m["to"] == [CONTACT]]
    assert len(mails) == 1 and "rejects your credentials" in mails[0]["subject"]

    await send(tenant)
    await deliver(services)
    await deliver(services)
    assert len(_ops(receiver)) == 1  # still marked: not told again


async def test_a_recheck_clears_the_mark_only_when_the_provider_accepts(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
) -> None:
    resend = await register(tenant, sandbox, "resend", 1)
    await register(tenant, sandbox, "mailgun", 2)
    await sb.fault("resend", status=401, scope="all")
    await send(tenant)
    await deliver(services)
    path = f"/v1/providers/{resend['id']}"
    refused = await tenant.patch(path, json={"recheck": True})
    assert refused.status_code == 422, refused.text
    assert (await _provider(tenant, resend["id"]))["credentials_rejected"] is True

    await sb.http.delete("/_sandbox/faults")
    accepted = await tenant.patch(path, json={"recheck": True})
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["credentials_rejected"] is False
    assert (await _provider(tenant, resend["id"]))["credentials_rejected_at"] is None


async def test_a_410_from_a_webhook_url_is_noticed_as_endpoint_disabled(
    services: Services,
    tenant: TenantClient,
    receiver: Receiver,
) -> None:
    await _targets(tenant, receiver)
    receiver.reply(Reply(status=410))
    await send_webhook(tenant, receiver.url + "/customer")
    await deliver(services)
    await deliver(services)
    [notice] = _ops(receiver)
    assert notice["type"] == "endpoint.disabled"
    assert notice["data"]["url"] == receiver.url + "/customer"
