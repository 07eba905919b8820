"""Twilio's signed callbacks from the sandbox to a real Homing over HTTP: status folded
into the job, forged and replayed callbacks, another tenant's message, STOP and START."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import httpx

from homing.sandbox.server import SandboxServer
from homing.sandbox.twilio_events import sign
from homing.services import Services
from tests.conftest import TenantClient, make_tenant
from tests.e2e.conftest import Sandbox, deliver, job
from tests.e2e.test_sms import TO, register_sms, send_sms


async def _connect(
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    homing_url: str,
    provider: str = "twilio",
    priority: int = 1,
) -> tuple[dict[str, Any], str]:
    """Register the sandbox's ``provider`` and give Homing its signing secret; the
    account and the URL the provider posts to."""
    account = await register_sms(tenant, sandbox, provider, priority)
    keys = (await sb.http.get("/_sandbox/keys")).json()
    response = await tenant.api.put(
        f"/v1/providers/{account['id']}/inbound", json=keys[provider], headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    return account, homing_url + response.json()["path"]


async def _event(
    sb: Sandbox, kind: str, url: str, to: str = TO, provider: str = "twilio"
) -> dict[str, Any]:
    """Have the sandbox post ``kind`` about its latest message to ``to``, signed."""
    response = await sb.http.post(
        "/_sandbox/events",
        json={"provider": provider, "message_to": to, "type": kind, "target_url": url},
    )
    assert response.status_code == 200, response.text
    posted: dict[str, Any] = response.json()
    return posted


async def test_status_callbacks_verify_and_fold_forward_only(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    job_id = await send_sms(tenant)
    assert await deliver(services) == 1
    sent = await _event(sb, "sent", url)
    assert (sent["status"], sent["response"]["applied"]) == (200, 1)
    delivered = await _event(sb, "delivered", url)
    assert delivered["response"]["applied"] == 1
    body = await job(tenant, job_id)
    assert body["delivery_status"] == "delivered"
    assert [e["type"] for e in body["events"]] == ["info", "delivered"]


async def test_a_forged_callback_is_401_and_changes_nothing(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    job_id = await send_sms(tenant)
    await deliver(services)
    [message] = await sb.messages("twilio")
    fields = {"MessageSid": message["message_id"], "MessageStatus": "undelivered", "To": TO}
    async with httpx.AsyncClient() as http:
        for signature in (
            sign("not-the-token", url, fields),
            "",
            "x" * 10_000,
            sign(sandbox.state.keys.twilio_auth_token, url + "?other=1", fields),
        ):
            response = await http.post(
                url,
                content=urlencode(fields),
                headers={
                    "Content-Type": "application/x-www-form-urlencoded",
                    "X-Twilio-Signature": signature,
                },
            )
            assert response.status_code == 401, response.text
            assert response.json()["error"]["code"] == "unauthenticated"
    assert (await job(tenant, job_id))["delivery_status"] is None


async def test_a_replayed_callback_is_answered_and_applied_once(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    job_id = await send_sms(tenant)
    await deliver(services)
    first = await _event(sb, "delivered", url)
    assert first["response"]["applied"] == 1
    async with httpx.AsyncClient() as http:
        replay = await http.post(url, content=urlencode(first["event"]), headers=first["headers"])
    assert replay.status_code == 200, replay.text
    assert (replay.json()["duplicates"], replay.json()["applied"]) == (1, 0)
    assert len((await job(tenant, job_id))["events"]) == 1


async def test_a_callback_about_another_tenants_message_touches_nothing(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    homing_url: str,
) -> None:
    other = await make_tenant(services, api, "other")
    await register_sms(other, sandbox, "twilio", 1)
    theirs = await send_sms(other)
    await deliver(services)
    _, mine = await _connect(tenant, sandbox, sb, homing_url)
    posted = await _event(sb, "undelivered", mine)
    assert posted["status"] == 200
    assert (posted["response"]["applied"], posted["response"]["quarantined"]) == (0, 1)
    assert (await job(other, theirs))["delivery_status"] is None


async def test_an_undelivered_callback_names_the_carrier_error(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    job_id = await send_sms(tenant)
    await deliver(services)
    await _event(sb, "undelivered", url)
    body = await job(tenant, job_id)
    assert body["delivery_status"] == "failed"
    assert body["events"][0]["detail"]["ErrorCode"] == "30007"


async def _signed_post(sandbox: SandboxServer, url: str, fields: dict[str, str]) -> Any:
    token = sandbox.state.keys.twilio_auth_token
    async with httpx.AsyncClient() as http:
        response = await http.post(
            url,
            content=urlencode(fields),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "X-Twilio-Signature": sign(token, url, fields),
            },
        )
    assert response.status_code == 200, response.text
    return response.json()


async def test_every_message_status_twilio_lists_lands_in_history_not_quarantine(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    # twilio-python's MessageInstance.Status lists partially_delivered and receiving.
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    job_id = await send_sms(tenant)
    await deliver(services)
    [message] = await sb.messages("twilio")
    status = {"MessageSid": message["message_id"], "MessageStatus": "partially_delivered"}
    partly = await _signed_post(sandbox, url, {**status, "To": TO})
    assert (partly["applied"], partly["quarantined"]) == (1, 0)
    events = (await job(tenant, job_id))["events"]
    assert [(e["type"], e["detail"]["MessageStatus"]) for e in events] == [
        ("info", "partially_delivered")
    ]
    inbound = {"MessageSid": "SM" + "1" * 32, "SmsStatus": "receiving", "From": TO}
    receiving = await _signed_post(sandbox, url, {**inbound, "Body": "hello"})
    assert (receiving["ignored"], receiving["quarantined"]) == (1, 0)


async def test_stop_suppresses_the_number_and_start_lifts_it(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    await send_sms(tenant)
    await deliver(services)
    stopped = await _event(sb, "stop", url)
    assert stopped["response"]["applied"] == 1
    listed = (await tenant.get("/v1/suppressions", params={"channel": "sms"})).json()["data"]
    assert [(s["address"], s["reason"], s["source"]) for s in listed] == [
        (TO, "opted_out", "twilio")
    ]
    refused = await send_sms(tenant)
    assert (await job(tenant, refused))["status"] == "SUPPRESSED"
    started = await _event(sb, "start", url)
    assert started["response"]["applied"] == 1
    assert (await tenant.get("/v1/suppressions", params={"channel": "sms"})).json()["data"] == []
    again = await send_sms(tenant)
    await deliver(services)
    assert (await job(tenant, again))["status"] == "COMPLETED"


async def test_carrier_filtering_continues_at_the_next_provider_when_asked(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    await register_sms(tenant, sandbox, "vonage", 2)
    job_id = await send_sms(tenant, fallback_on_undelivered=True)
    assert await deliver(services) == 1
    posted = await _event(sb, "undelivered", url)
    assert posted["response"]["applied"] == 1
    waiting = await job(tenant, job_id)
    assert (waiting["status"], waiting["error_class"]) == ("PENDING", "undelivered")
    again = await _event(sb, "undelivered", url)  # Twilio's retry of the same callback
    assert again["response"]["duplicates"] == 1
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert (body["status"], body["provider"]) == ("COMPLETED", "vonage")
    trail = [(a["number"], a["provider"], a["outcome"]) for a in body["attempts"]]
    assert trail == [
        (1, "twilio", "success"),
        (1, "twilio", "provider_permanent"),
        (2, "vonage", "success"),
    ]
    assert "30007 carrier filtering" in body["attempts"][1]["error"]
    [message] = await sb.messages("vonage")
    assert message["job_id"] == job_id
    # A late callback about the first send changes nothing any more.
    await _event(sb, "undelivered_unknown", url)
    assert (await job(tenant, job_id))["status"] == "COMPLETED"
    assert len(await sb.messages("vonage")) == 1


async def test_without_the_flag_or_for_the_number_itself_the_job_stays_completed(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url)
    await register_sms(tenant, sandbox, "vonage", 2)
    plain = await send_sms(tenant)
    await deliver(services)
    await _event(sb, "undelivered", url)
    assert (await job(tenant, plain))["status"] == "COMPLETED"
    asked = await send_sms(tenant, to="+14155552672", fallback_on_undelivered=True)
    await deliver(services)
    await _event(sb, "failed", url, to="+14155552672")  # 30005: the number, not the route
    body = await job(tenant, asked)
    assert (body["status"], body["delivery_status"]) == ("COMPLETED", "failed")
    assert await deliver(services) == 0
    assert await sb.messages("vonage") == []


async def test_vonage_signed_callbacks_fold_and_forgeries_and_replays_do_not(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url, "vonage")
    job_id = await send_sms(tenant)
    await deliver(services)
    delivered = await _event(sb, "delivered", url, provider="vonage")
    assert (delivered["status"], delivered["response"]["applied"]) == (200, 1)
    assert (await job(tenant, job_id))["delivery_status"] == "delivered"
    body = json.dumps(delivered["event"]).encode()
    async with httpx.AsyncClient() as http:
        replay = await http.post(url, content=body, headers=delivered["headers"])
        assert replay.status_code == 200
        assert replay.json()["applied"] == 0
        forged = {**delivered["event"], "status": "undeliverable"}
        tampered = await http.post(url, content=json.dumps(forged), headers=delivered["headers"])
        assert tampered.status_code == 401
        unsigned = await http.post(url, content=json.dumps(forged))
        assert unsigned.status_code == 401
    assert (await job(tenant, job_id))["delivery_status"] == "delivered"


async def test_a_vonage_rejection_continues_at_twilio_when_asked(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url, "vonage")
    await register_sms(tenant, sandbox, "twilio", 2)
    job_id = await send_sms(tenant, fallback_on_undelivered=True)
    await deliver(services)
    await _event(sb, "rejected", url, provider="vonage")
    await deliver(services)
    body = await job(tenant, job_id)
    assert (body["status"], body["provider"]) == ("COMPLETED", "twilio")
    assert "rejected by the carrier" in body["attempts"][1]["error"]


async def test_a_stop_to_a_vonage_number_suppresses_and_start_lifts_it(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, homing_url: str
) -> None:
    _, url = await _connect(tenant, sandbox, sb, homing_url, "vonage")
    await send_sms(tenant)
    await deliver(services)
    stopped = await _event(sb, "stop", url, provider="vonage")
    assert (stopped["status"], stopped["response"]["applied"]) == (200, 1)
    assert stopped["event"]["text"] == "STOP" and "status" not in stopped["event"]
    listed = (await tenant.get("/v1/suppressions", params={"channel": "sms"})).json()["data"]
    assert [(s["address"], s["reason"], s["source"]) for s in listed] == [
        (TO, "opted_out", "vonage")
    ]
    refused = await send_sms(tenant)
    assert (await job(tenant, refused))["status"] == "SUPPRESSED"
    async with httpx.AsyncClient() as http:  # a STOP with its signature taken off
        unsigned = await http.post(url, content=json.dumps(stopped["event"]))
        assert unsigned.status_code == 401
    started = await _event(sb, "start", url, provider="vonage")
    assert started["response"]["applied"] == 1
    assert (await tenant.get("/v1/suppressions", params={"channel": "sms"})).json()["data"] == []
    again = await send_sms(tenant)
    await deliver(services)
    assert (await job(tenant, again))["status"] == "COMPLETED"
