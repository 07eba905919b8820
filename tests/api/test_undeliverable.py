"""A send no provider could deliver is refused at accept (422), not queued to be
dead-lettered: ``no_provider`` when the tenant has no enabled provider for the channel,
``no_sender`` for an SMS with no sender on the message nor on any enabled SMS provider.
Batch items are refused one by one; channels that need no provider are not affected."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from homing.channels import Channel
from homing.errors import NoProvider
from homing.managers.provider_presence import ProviderPresence
from homing.services import Services
from homing.store.providers import ProviderStore
from homing.store.tables.core import jobs
from tests.admission_helpers import send_email
from tests.conftest import TenantClient, make_tenant, stored_provider

SMS = {"to": "+14155552671", "body": "Your code is 1234"}


async def _jobs(services: Services) -> int:
    async with services.db.transaction() as conn:
        return int((await conn.scalar(select(func.count()).select_from(jobs))) or 0)


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    """A tenant with no provider (tests/api/conftest.py's has two)."""
    return await make_tenant(services, api, "bare")


def _code(response: Any) -> str:
    code: str = response.json()["error"]["code"]
    return code


async def test_an_email_with_no_provider_is_refused_and_nothing_is_queued(
    services: Services, tenant: TenantClient
) -> None:
    response = await send_email(tenant)
    assert response.status_code == 422, response.text
    assert _code(response) == "no_provider"
    assert response.json()["error"]["details"] == {"channel": "email"}
    assert await _jobs(services) == 0


async def test_a_disabled_provider_does_not_count(services: Services, tenant: TenantClient) -> None:
    account = await stored_provider(services, tenant.tenant_id)
    assert (await send_email(tenant)).status_code == 202
    changed = await tenant.patch(f"/v1/providers/{account.id}", json={"enabled": False})
    assert changed.status_code == 200, changed.text
    # Changed through this process: its cached answer is dropped at once.
    assert _code(await send_email(tenant)) == "no_provider"
    assert await _jobs(services) == 1


async def test_a_provider_of_another_channel_does_not_count(
    services: Services, tenant: TenantClient
) -> None:
    await stored_provider(services, tenant.tenant_id, Channel.SMS, "twilio", **{"from": "+1"})
    assert _code(await send_email(tenant)) == "no_provider"
    assert (await tenant.post("/v1/notifications/sms", json=SMS)).status_code == 202


async def test_an_sms_needs_a_sender_on_the_message_or_a_provider(
    services: Services, tenant: TenantClient
) -> None:
    assert _code(await tenant.post("/v1/notifications/sms", json=SMS)) == "no_provider"
    await stored_provider(services, tenant.tenant_id, Channel.SMS, "vonage")
    refused = await tenant.post("/v1/notifications/sms", json=SMS)
    assert refused.status_code == 422, refused.text
    assert _code(refused) == "no_sender"
    named = await tenant.post("/v1/notifications/sms", json={**SMS, "from": "Acme"})
    assert named.status_code == 202, named.text
    await stored_provider(
        services, tenant.tenant_id, Channel.SMS, "twilio", messaging_service_sid="MG1"
    )
    assert (await tenant.post("/v1/notifications/sms", json=SMS)).status_code == 202


async def test_batch_items_are_refused_alone(services: Services, tenant: TenantClient) -> None:
    messages = [{**SMS, "from": "Acme"}, SMS, {**SMS, "from": "Acme"}]
    none = await tenant.post("/v1/notifications/sms/batch", json={"messages": messages})
    assert none.status_code == 202, none.text
    assert [r["error"]["code"] for r in none.json()["results"]] == ["no_provider"] * 3
    await stored_provider(services, tenant.tenant_id, Channel.SMS, "vonage")
    some = await tenant.post("/v1/notifications/sms/batch", json={"messages": messages})
    results = some.json()["results"]
    assert [r.get("error", {}).get("code") for r in results] == [None, "no_sender", None]
    assert [r.get("status") for r in results] == ["PENDING", None, "PENDING"]
    assert await _jobs(services) == 2


async def test_an_email_batch_with_no_provider_refuses_each_item(
    services: Services, tenant: TenantClient
) -> None:
    email = {"to": "ada@example.com", "from": "a@acme.example", "subject": "Hi", "text": "x"}
    response = await tenant.post(
        "/v1/notifications/email/batch", json={"messages": [email, {"to": 1}]}
    )
    assert response.status_code == 202, response.text
    codes = [r["error"]["code"] for r in response.json()["results"]]
    assert codes == ["no_provider", "validation_error"]
    assert await _jobs(services) == 0


async def test_a_chat_message_with_no_chat_provider_is_no_provider(
    tenant: TenantClient,
) -> None:
    response = await tenant.post("/v1/notifications/chat", json={"to": "4242", "text": "hi"})
    assert response.status_code == 422, response.text
    assert _code(response) == "no_provider"


async def test_a_webhook_needs_no_provider(tenant: TenantClient) -> None:
    body = {"url": "https://hooks.example.com/in", "payload": {"a": 1}}
    response = await tenant.post("/v1/notifications/webhook", json=body)
    assert response.status_code == 202, response.text


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_change_through_another_process_reaches_this_one_within_the_window(
    services: Services, tenant: TenantClient
) -> None:
    clock = _Clock()
    presence = ProviderPresence(services.providers, seconds=5, now=clock)
    # Another process's store: no listener here.
    elsewhere = ProviderStore(services.db, most=services.settings.limits.providers)
    account = await stored_provider(services, tenant.tenant_id)
    await presence.check(tenant.tenant_id, Channel.EMAIL)
    await elsewhere.update(tenant.tenant_id, account.id, enabled=False)
    clock.now += 4.9
    await presence.check(tenant.tenant_id, Channel.EMAIL)  # still believed, from the cache
    clock.now += 0.2
    with pytest.raises(NoProvider):
        await presence.check(tenant.tenant_id, Channel.EMAIL)
    # A refusal is not cached: a provider added elsewhere counts on the next send.
    await elsewhere.update(tenant.tenant_id, account.id, enabled=True)
    await presence.check(tenant.tenant_id, Channel.EMAIL)
