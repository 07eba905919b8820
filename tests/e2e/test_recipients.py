"""Sends by recipient end to end, on SQLite and PostgreSQL, through the sandbox over real
HTTP: the address comes from the stored recipient, a category the recipient opted out
of ends SUPPRESSED with no provider call, and what cannot go is refused with 422.
Marketing categories' emails carry an unsubscribe link, so HOMING_PUBLIC_URL is set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.chat_helpers import register_telegram
from tests.conftest import TenantClient
from tests.e2e.conftest import SLACK_PATH, Sandbox, deliver, job, register
from tests.e2e.test_sms import register_sms
from tests.fixtures import settings_for

FROM = "Acme <hello@acme.example>"


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        provider_timeout_seconds=1,
        alert_slack_webhook_url=sandbox.base_url + SLACK_PATH,
        public_url="http://homing.test",
    )


async def put_recipient(tenant: TenantClient, external_id: str, **fields: Any) -> dict[str, Any]:
    response = await tenant.put(f"/v1/recipients/{external_id}", json=fields)
    assert response.status_code in (200, 201), response.text
    body: dict[str, Any] = response.json()
    return body


async def put_category(tenant: TenantClient, key: str, **fields: Any) -> None:
    body = {"name": key.title(), "kind": "transactional", **fields}
    response = await tenant.put(f"/v1/categories/{key}", json=body)
    assert response.status_code in (200, 201), response.text


async def email_by_recipient(tenant: TenantClient, **fields: Any) -> Any:
    body = {"from": FROM, "subject": "Hi", "text": "Hello", **fields}
    return await tenant.post("/v1/notifications/email", json=body)


async def test_an_email_by_recipient_reaches_its_stored_address(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await put_recipient(tenant, "user-1", email="Ada <Ada@Example.com>")
    response = await email_by_recipient(tenant, recipient="user-1")
    assert response.status_code == 202, response.text
    assert await deliver(services) == 1
    assert (await job(tenant, response.json()["id"]))["status"] == "COMPLETED"
    [message] = await sb.messages("resend")
    assert message["to"] == ["Ada@example.com"]  # stored canonical: domain folded


async def test_an_sms_and_a_chat_by_recipient_reach_their_stored_addresses(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    await register_telegram(tenant, sandbox)
    await put_recipient(tenant, "user-2", phone="+1 (415) 555-2671", telegram_chat_id="4242")
    sms = await tenant.post("/v1/notifications/sms", json={"recipient": "user-2", "body": "Hi"})
    assert sms.status_code == 202, sms.text
    chat = await tenant.post("/v1/notifications/chat", json={"recipient": "user-2", "text": "Hi"})
    assert chat.status_code == 202, chat.text
    assert await deliver(services) == 2
    [text] = await sb.messages("twilio")
    assert text["to"] == ["+14155552671"]
    [message] = await sb.messages("telegram")
    assert message["to"] == ["4242"]


async def test_an_opted_out_category_ends_suppressed_with_no_provider_call(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await put_category(tenant, "digest", kind="marketing", default={"email": True})
    await put_recipient(tenant, "user-3", email="ada@example.com")
    changed = await tenant.patch(
        "/v1/recipients/user-3/preferences", json={"categories": {"digest": {"email": False}}}
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["categories"]["digest"] == {
        "email": False,
        "sms": False,
        "chat": False,
        "in_app": False,
    }
    response = await email_by_recipient(tenant, recipient="user-3", category="digest")
    assert response.status_code == 202, response.text
    body = await job(tenant, response.json()["id"])
    assert (body["status"], body["error_class"]) == ("SUPPRESSED", "preference")
    assert await deliver(services) == 0
    assert await sb.messages("resend") == []


async def test_a_category_off_by_default_suppresses_a_batch_item_alone(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await put_category(tenant, "news", kind="marketing")  # email left out: off
    await put_category(tenant, "receipts")  # transactional: on
    await put_recipient(tenant, "user-4", email="ada@example.com")
    item = {"from": FROM, "subject": "Hi", "text": "Hello", "recipient": "user-4"}
    response = await tenant.post(
        "/v1/notifications/email/batch",
        json={"messages": [{**item, "category": "news"}, {**item, "category": "receipts"}]},
    )
    assert response.status_code == 202, response.text
    first, second = response.json()["results"]
    assert (await job(tenant, first["id"]))["error_class"] == "preference"
    assert await deliver(services) == 1
    assert (await job(tenant, second["id"]))["status"] == "COMPLETED"
    assert len(await sb.messages("resend")) == 1


async def test_sends_that_cannot_go_are_refused_with_their_codes(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await put_recipient(tenant, "phone-only", phone="+14155552671")
    cases = [
        ({"recipient": "phone-only"}, "recipient_unreachable"),
        ({"recipient": "nobody"}, "unknown_recipient"),
        ({"to": "ada@example.com", "category": "missing"}, "unknown_category"),
        ({"to": "ada@example.com", "recipient": "phone-only"}, "validation_error"),
        ({}, "validation_error"),
    ]
    for fields, code in cases:
        response = await email_by_recipient(tenant, **fields)
        assert response.status_code == 422, (fields, response.text)
        assert response.json()["error"]["code"] == code, fields
        assert "+1415" not in response.text  # no address in a refusal


async def test_a_plain_email_still_takes_the_direct_path_and_goes_out(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    response = await email_by_recipient(tenant, to="ada@example.com")
    assert response.status_code == 202, response.text
    assert await deliver(services) == 1
    assert len(await sb.messages("resend")) == 1


async def test_a_repeat_by_recipient_is_a_replay_after_its_address_changed(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await put_recipient(tenant, "user-5", email="ada@example.com")
    body = {"recipient": "user-5", "from": FROM, "subject": "Hi", "text": "Hello"}
    key = {"Idempotency-Key": "order-5"}
    first = await tenant.post("/v1/notifications/email", json=body, headers=key)
    await put_recipient(tenant, "user-5", email="ada@new.example")
    again = await tenant.post("/v1/notifications/email", json=body, headers=key)
    assert again.status_code == 202, again.text
    assert again.json()["id"] == first.json()["id"]
    assert again.headers["Idempotent-Replayed"] == "true"


async def test_past_its_frequency_cap_a_send_ends_suppressed_with_no_provider_call(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await put_category(tenant, "alerts", frequency_cap={"count": 2, "per_seconds": 3600})
    await put_recipient(tenant, "user-6", email="ada@example.com")
    ids = []
    for _ in range(3):
        response = await email_by_recipient(tenant, recipient="user-6", category="alerts")
        assert response.status_code == 202, response.text
        ids.append(response.json()["id"])
    assert await deliver(services) == 2
    last = await job(tenant, ids[-1])
    assert (last["status"], last["error_class"]) == ("SUPPRESSED", "frequency_cap")
    assert len(await sb.messages("resend")) == 2


async def test_a_cap_holds_for_sends_to_the_address_alone_single_and_batch(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 1)
    await put_category(tenant, "alerts", frequency_cap={"count": 2, "per_seconds": 3600})
    await put_recipient(tenant, "user-8", email="grace@example.com")
    by_recipient = await email_by_recipient(tenant, recipient="user-8", category="alerts")
    alone = await email_by_recipient(tenant, to="Grace@Example.com", category="alerts")
    item = {"from": FROM, "subject": "Hi", "text": "Hello", "category": "alerts"}
    batch = await tenant.post(
        "/v1/notifications/email/batch",
        json={"messages": [{**item, "to": "grace@example.com"}, {**item, "to": "lin@example.com"}]},
    )
    late = await email_by_recipient(tenant, recipient="user-8", category="alerts")

    assert [r.status_code for r in (by_recipient, alone, batch, late)] == [202] * 4, batch.text
    over, other = batch.json()["results"]
    assert await deliver(services) == 3  # user-8 twice (once by address), lin once
    assert (await job(tenant, over["id"]))["error_class"] == "frequency_cap"
    assert (await job(tenant, late.json()["id"]))["error_class"] == "frequency_cap"
    assert (await job(tenant, other["id"]))["status"] == "COMPLETED"
    sent = sorted(m["to"][0].lower() for m in await sb.messages("resend"))
    assert sent == ["grace@example.com", "grace@example.com", "lin@example.com"]


async def test_an_sms_batch_by_recipient_refuses_the_unreachable_item_alone(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    await put_recipient(tenant, "has-phone", phone="+14155552671")
    await put_recipient(tenant, "email-only", email="ada@example.com")
    messages = [{"recipient": r, "body": "Hi"} for r in ("has-phone", "email-only", "nobody")]
    response = await tenant.post("/v1/notifications/sms/batch", json={"messages": messages})
    assert response.status_code == 202, response.text
    results = response.json()["results"]
    assert [r.get("error", {}).get("code") for r in results] == [
        None,
        "recipient_unreachable",
        "unknown_recipient",
    ]
    assert await deliver(services) == 1
    [text] = await sb.messages("twilio")
    assert text["to"] == ["+14155552671"]


async def test_a_cap_holds_for_sms_to_the_number_alone_as_for_sms_by_recipient(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    await put_category(tenant, "codes", frequency_cap={"count": 2, "per_seconds": 3600})
    await put_recipient(tenant, "texted", phone="+1 415 555 2671")
    by_recipient = await tenant.post(
        "/v1/notifications/sms", json={"recipient": "texted", "body": "1", "category": "codes"}
    )
    alone = {"to": "+14155552671", "body": "2", "category": "codes"}
    single = await tenant.post("/v1/notifications/sms", json=alone)
    batch = await tenant.post(
        "/v1/notifications/sms/batch", json={"messages": [alone, {**alone, "body": "3"}]}
    )

    assert [r.status_code for r in (by_recipient, single, batch)] == [202] * 3, batch.text
    assert await deliver(services) == 2
    for result in batch.json()["results"]:
        assert (await job(tenant, result["id"]))["error_class"] == "frequency_cap"
    assert [m["to"] for m in await sb.messages("twilio")] == [["+14155552671"]] * 2
