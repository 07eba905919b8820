"""SMS end to end: accept → Twilio or Vonage in the sandbox over real HTTP, on both
databases; fallback, each failure class, and the per-channel suppression list."""

from __future__ import annotations

from typing import Any

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.timing.pacing import account_rules
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, job

TO = "+14155552671"
SID = "AC" + "0" * 32


async def register_sms(
    tenant: TenantClient,
    sandbox: SandboxServer,
    provider: str,
    priority: int,
    credentials: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Register the sandbox's Twilio or Vonage as one of the tenant's SMS providers."""
    if credentials is None:
        credentials = (
            {"account_sid": SID, "auth_token": "tw-token-secret"}
            if provider == "twilio"
            else {"api_key": "vn-key", "api_secret": "vn-secret-value"}
        )
    response = await tenant.post(
        "/v1/providers",
        json={
            "channel": "sms",
            "provider": provider,
            "credentials": credentials,
            "config": {"base_url": sandbox.provider_base_url(provider), "from": "+14155550100"},
            "priority": priority,
        },
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def send_sms(tenant: TenantClient, **overrides: Any) -> str:
    response = await tenant.post(
        "/v1/notifications/sms", json={"to": TO, "body": "Your code is 1234", **overrides}
    )
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


def _trail(body: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(a["number"], a["provider"], a["outcome"]) for a in body["attempts"]]


async def test_an_sms_goes_out_through_twilio_and_shows_its_segments(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    job_id = await send_sms(tenant, to="+1 (415) 555-2671", body="héllo " * 30)
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert (body["status"], body["channel"], body["provider"]) == ("COMPLETED", "sms", "twilio")
    assert body["sms"] == {
        "to": TO,
        "from": None,
        "encoding": "GSM-7",
        "characters": 180,
        "segments": 2,
    }
    [message] = await sb.messages("twilio")
    assert message["to"] == [TO]
    assert message["from"] == "+14155550100"
    assert message["text"] == "héllo " * 30


async def test_twilio_down_falls_back_to_vonage(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    await register_sms(tenant, sandbox, "vonage", 2)
    await sb.fault("twilio", status=503)
    job_id = await send_sms(tenant, **{"from": "Acme"})
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert _trail(body) == [(1, "twilio", "transient"), (1, "vonage", "success")]
    [message] = await sb.messages("vonage")
    assert (message["to"], message["from"], message["job_id"]) == ([TO], "Acme", job_id)


async def test_a_twilio_429_is_throttled_and_counted_by_the_sandbox(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    await sb.fault("twilio", status=429, retry_after=30, count=1)
    job_id = await send_sms(tenant)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "PENDING"
    assert _trail(body) == [(1, "twilio", "throttled")]
    assert sandbox.state.recorder.stats()["throttled"]["twilio"] == 1


async def test_an_invalid_number_at_twilio_fails_the_job_without_fallback(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    await register_sms(tenant, sandbox, "vonage", 2)
    job_id = await send_sms(tenant, to="+15005550001")
    await deliver(services)
    body = await job(tenant, job_id)
    assert (body["status"], body["error_class"]) == ("FAILED", "message_permanent")
    assert _trail(body) == [(1, "twilio", "message_permanent")]
    assert "21211" in body["attempts"][0]["error"]
    assert await sb.messages("vonage") == []


async def test_rejected_twilio_credentials_skip_to_vonage(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    await register_sms(tenant, sandbox, "vonage", 2)
    await sb.fault("twilio", status=401)
    job_id = await send_sms(tenant)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert _trail(body) == [(1, "twilio", "provider_permanent"), (1, "vonage", "success")]
    assert "tw-token-secret" not in str(body)


async def test_bad_credentials_are_refused_at_registration(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    for provider, credentials in (
        ("twilio", {"account_sid": SID, "auth_token": "invalid-token"}),
        ("vonage", {"api_key": "k", "api_secret": "invalid-secret"}),
    ):
        response = await tenant.post(
            "/v1/providers",
            json={
                "channel": "sms",
                "provider": provider,
                "credentials": credentials,
                "config": {"base_url": sandbox.provider_base_url(provider)},
            },
        )
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "invalid_credentials"
        assert "invalid-" not in response.text


async def test_an_sms_provider_cannot_register_as_email(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    response = await tenant.post(
        "/v1/providers",
        json={
            "channel": "email",
            "provider": "twilio",
            "credentials": {"account_sid": SID, "auth_token": "t"},
            "config": {"base_url": sandbox.provider_base_url("twilio")},
        },
    )
    assert response.status_code == 422, response.text


async def test_an_sms_suppression_blocks_sms_only(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    added = await tenant.post(
        "/v1/suppressions", json={"channel": "sms", "address": "+1 415 555 2671"}
    )
    assert added.status_code == 201, added.text
    assert added.json()["address"] == TO
    suppressed = await send_sms(tenant)
    assert (await job(tenant, suppressed))["status"] == "SUPPRESSED"
    other = await send_sms(tenant, to="+14155552672")
    await deliver(services)
    assert (await job(tenant, other))["status"] == "COMPLETED"
    removed = await tenant.delete("/v1/suppressions", params={"channel": "sms", "address": TO})
    assert removed.status_code == 204
    again = await send_sms(tenant)
    await deliver(services)
    assert (await job(tenant, again))["status"] == "COMPLETED"


async def test_the_sms_batch_accepts_each_valid_message(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register_sms(tenant, sandbox, "vonage", 1)
    response = await tenant.post(
        "/v1/notifications/sms/batch",
        json={
            "messages": [
                {"to": TO, "body": "one", "from": "Acme"},
                {"to": "12345", "body": "bad number"},
                {"to": "+14155552672", "body": "two", "from": "Acme", "idempotency_key": "k2"},
            ]
        },
    )
    assert response.status_code == 202, response.text
    body = response.json()
    assert (body["accepted"], body["rejected"]) == (2, 1)
    assert body["results"][1]["error"]["code"] == "validation_error"
    assert await deliver(services) == 2
    assert sorted(m["to"][0] for m in await sb.messages("vonage")) == [TO, "+14155552672"]


async def test_twilio_21610_fails_the_job_and_suppresses_the_number_for_sms_only(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    stopped = "+15005550004"  # Twilio's magic number for a recipient who replied STOP
    await register_sms(tenant, sandbox, "twilio", 1)
    await register_sms(tenant, sandbox, "vonage", 2)
    first = await send_sms(tenant, to=stopped)
    await deliver(services)
    body = await job(tenant, first)
    assert (body["status"], body["error_class"]) == ("FAILED", "message_permanent")
    assert _trail(body) == [(1, "twilio", "message_permanent")]
    listed = await tenant.get("/v1/suppressions", params={"channel": "sms"})
    [entry] = listed.json()["data"]
    assert (entry["address"], entry["reason"], entry["source"]) == (
        stopped,
        "opted_out",
        "provider",
    )
    again = await send_sms(tenant, to=stopped)
    assert (await job(tenant, again))["status"] == "SUPPRESSED"
    assert await sb.messages("vonage") == []
    email = await tenant.get("/v1/suppressions", params={"channel": "email"})
    assert email.json()["data"] == []


async def test_vendor_rate_presets_apply_unless_the_account_names_its_own(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    twilio = await register_sms(tenant, sandbox, "twilio", 1)
    vonage = await register_sms(tenant, sandbox, "vonage", 2)
    assert "rate_rules" not in twilio["config"] and "rate_rules" not in vonage["config"]

    async def paced_by(account_id: str) -> list[tuple[str, int, float]]:
        account = await services.providers.get(tenant.tenant_id, account_id)
        return [(r.scope, r.limit, r.per_seconds) for r in account_rules(account)]

    assert await paced_by(twilio["id"]) == [("account", 100, 1)]
    assert await paced_by(vonage["id"]) == [("account", 30, 1)]
    own = await tenant.post(
        "/v1/providers",
        json={
            "channel": "sms",
            "provider": "vonage",
            "credentials": {"api_key": "k2", "api_secret": "s2-secret"},
            "config": {
                "base_url": sandbox.provider_base_url("vonage"),
                "rate_rules": [{"scope": "recipient", "limit": 1, "per_seconds": 60}],
            },
        },
    )
    assert own.status_code == 201, own.text
    assert await paced_by(own.json()["id"]) == [("recipient", 1, 60)]
    patched = await tenant.patch(f"/v1/providers/{twilio['id']}", json={"rate_rules": []})
    assert patched.json()["config"]["rate_rules"] == []
    assert await paced_by(twilio["id"]) == []


async def test_an_email_suppression_never_blocks_an_sms_and_the_other_way_round(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    await register_sms(tenant, sandbox, "twilio", 1)
    added = await tenant.post("/v1/suppressions", json={"address": "ada@example.com"})
    assert added.status_code == 201
    job_id = await send_sms(tenant)
    await deliver(services)
    assert (await job(tenant, job_id))["status"] == "COMPLETED"
    sms = await tenant.post("/v1/suppressions", json={"channel": "sms", "address": TO})
    assert sms.json()["channel"] == "sms"
    listed = (await tenant.get("/v1/suppressions", params={"channel": "email"})).json()["data"]
    assert [s["address"] for s in listed] == ["ada@example.com"]
