"""A hostile tenant against erasure (``POST /v1/erasure``, ``DELETE
/v1/recipients/{id}``): another tenant's recipient or address, huge and hostile
addresses, channels that do not exist, a flood of erasures, and addresses that would
match more than themselves. Each is refused before
any work, or erases only the caller's own rows, in bounded work per call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, deliver, job, make_tenant
from tests.e2e.conftest import register, send
from tests.e2e.test_recipients import put_recipient
from tests.e2e.test_templates import make_template, publish
from tests.fixtures import settings_for

ADDRESS = "ada@example.com"
PER_MINUTE = 4


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    """A tenant that can send: an email and an SMS provider stored (a send no provider
    could deliver is refused at accept)."""
    return await make_tenant(services, api, "acme", provider=True)


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        provider_timeout_seconds=1,
        erasure_batch_size=2,
        erasure_max_batches=2,
        erasures_per_minute=PER_MINUTE,
    )


async def erase(tenant: TenantClient, address: Any, channel: Any = "email") -> httpx.Response:
    return await tenant.post("/v1/erasure", json={"address": address, "channel": channel})


async def events(tenant: TenantClient) -> list[dict[str, Any]]:
    response = await tenant.get("/v1/audit-log")
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


async def test_another_tenants_recipient_and_address_are_not_erased(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    other = await make_tenant(services, api, "other", provider=True)
    await register(other, sandbox, "resend", 1)
    put = await other.put("/v1/recipients/shared", json={"email": ADDRESS})
    assert put.status_code == 201, put.text
    sent = await send(other, to=ADDRESS)
    assert await deliver(services) == 1

    refused = await tenant.delete("/v1/recipients/shared")
    assert refused.status_code == 404, refused.text
    mine = await erase(tenant, ADDRESS)
    assert mine.status_code == 200, mine.text
    assert mine.json()["erased"] == {}

    assert (await other.get("/v1/recipients/shared")).status_code == 200
    assert (await job(other, sent))["to"] == ADDRESS
    assert [e["action"] for e in await events(other)][:1] != ["address.erased"]
    [event] = [e for e in await events(tenant) if e["action"] == "address.erased"]
    assert event["changes"]["erased"] == {} and ADDRESS not in str(event)


@pytest.mark.parametrize(
    ("address", "channel"),
    [
        ("a" * 321, "email"),
        ("a" * 1_000_000, "email"),
        ("ada@example.com\r\nBcc: eve@example.com", "email"),
        ("ada\x00@example.com", "email"),
        ("two@example.com, three@example.com", "email"),
        ("", "email"),
        ("not a number", "sms"),
        ("+1" + "5" * 400, "sms"),
        ("fax:123", "chat"),
        ("telegram:", "chat"),
        (["ada@example.com"], "email"),
        ({"$ne": None}, "email"),
    ],
)
async def test_a_huge_or_hostile_address_is_refused_before_any_work(
    tenant: TenantClient, address: Any, channel: str
) -> None:
    response = await erase(tenant, address, channel)
    assert response.status_code in (413, 422), response.text
    assert "eve@example.com" not in response.text
    assert [e for e in await events(tenant) if e["action"] == "address.erased"] == []


@pytest.mark.parametrize("channel", ["fax", "webhook", "in_app", "EMAIL", "", None, 5])
async def test_a_channel_that_does_not_exist_or_has_no_person_is_422(
    tenant: TenantClient, channel: Any
) -> None:
    response = await erase(tenant, ADDRESS, channel)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "validation_error"


async def test_an_erasure_flood_does_bounded_work_per_call_and_is_rate_limited(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    assert (await tenant.put("/v1/recipients/anyone", json={})).status_code == 201
    for _ in range(6):
        await send(tenant, to=ADDRESS)
    assert await deliver(services) == 6

    # Two batches of two a call: four jobs, then the other two.
    first = await erase(tenant, ADDRESS)
    assert first.status_code == 202, first.text
    assert first.json()["erased"]["jobs"] == 4 and first.json()["complete"] is False
    second = await erase(tenant, ADDRESS)
    assert second.status_code == 200, second.text
    assert second.json()["erased"]["jobs"] == 2
    for _ in range(PER_MINUTE - 2):
        assert (await erase(tenant, "someone@example.com")).status_code == 200
    flooded = await erase(tenant, ADDRESS)
    assert flooded.status_code == 429, flooded.text
    assert flooded.json()["error"]["code"] == "rate_limited"
    assert (await tenant.delete("/v1/recipients/anyone")).status_code == 429
    assert (await tenant.get("/v1/recipients/anyone")).status_code == 200

    # Another tenant's erasures have a window of their own.
    other = await make_tenant(services, api, "other", provider=True)
    assert (await erase(other, ADDRESS)).status_code == 200


async def pending_email_step(client: TenantClient, email: str) -> str:
    """A running notification to ``user-1`` (``email``) whose email step is not made yet."""
    await make_template(client, "report")
    await publish(client, "report", email={"subject": "Hi", "text": "Hi"}, in_app={"body": "Hi"})
    await put_recipient(client, "user-1", email=email)
    body = {
        "recipient": "user-1",
        "template": "report",
        "from": "Acme <hello@acme.example>",
        "channels": ["in_app", "email"],
        "strategy": "escalate",
        "escalate_after_seconds": 600,
    }
    response = await client.post("/v1/notifications", json=body)
    assert response.status_code == 202, response.text
    notification_id: str = response.json()["id"]
    return notification_id


@pytest.mark.sql("LIKE wildcards in an address against the steps' text search")
async def test_an_address_erasure_ends_only_the_callers_steps_to_exactly_that_address(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    # The caller's step goes to an address that holds the erased one; another tenant's
    # to the erased address itself. Wildcards of SQL's LIKE match nothing either.
    other = await make_tenant(services, api, "other", provider=True)
    mine = await pending_email_step(tenant, f"b{ADDRESS}")
    theirs = await pending_email_step(other, ADDRESS)
    for hostile in (ADDRESS, f"%{ADDRESS[1:]}", f"_{ADDRESS[1:]}"):
        response = await erase(tenant, hostile)
        assert response.status_code == 200, response.text
        assert "notification_steps" not in response.json()["erased"], hostile
    for client, notification_id in ((tenant, mine), (other, theirs)):
        shown = (await client.get(f"/v1/notifications/{notification_id}")).json()
        assert [s["status"] for s in shown["steps"]] == ["queued", "pending"], shown
