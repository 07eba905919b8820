"""A hostile sender of SMS to a tenant's Vonage number, or of bodies to its webhook: a
STOP buried in 60 KB of text, a text that is no string, a sender that is two numbers,
an unsigned or re-signed STOP, and a STOP to one tenant's number. None suppresses what
it names except the plain, signed STOP, and that only for the tenant it was sent to."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any

import httpx

from homing.sandbox.server import SandboxServer
from homing.sandbox.vonage_events import jwt
from homing.services import Services
from tests.conftest import TenantClient, make_tenant
from tests.e2e.test_sms import register_sms

SECRET = "hostile-vonage-signature-secret"
SENDER = "14155552671"


async def _url(tenant: TenantClient, sandbox: SandboxServer) -> str:
    account = await register_sms(tenant, sandbox, "vonage", 1)
    response = await tenant.api.put(
        f"/v1/providers/{account['id']}/inbound",
        json={"signing_secret": SECRET},
        headers=tenant.headers,
    )
    assert response.status_code == 200, response.text
    path: str = response.json()["path"]
    return path


def _message(text: Any, sender: Any = SENDER) -> dict[str, Any]:
    return {
        "channel": "sms",
        "message_uuid": str(uuid.uuid4()),
        "to": "14155550100",
        "from": sender,
        "timestamp": "2026-12-01T12:00:00Z",
        "text": text,
        "message_type": "text",
    }


def _signed(document: dict[str, Any], secret: str = SECRET) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(document).encode()
    claims = {"iat": int(time.time()), "payload_hash": hashlib.sha256(body).hexdigest()}
    return body, {"Authorization": f"Bearer {jwt(secret, claims)}"}


async def _post(tenant: TenantClient, url: str, document: dict[str, Any]) -> httpx.Response:
    body, headers = _signed(document)
    return await tenant.api.post(url, content=body, headers=headers)


async def _suppressed(tenant: TenantClient) -> list[str]:
    listed = (await tenant.get("/v1/suppressions", params={"channel": "sms"})).json()["data"]
    return [s["address"] for s in listed]


async def test_hostile_inbound_messages_are_answered_and_suppress_nothing(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    url = await _url(tenant, sandbox)
    hostile = [
        _message("STOP " + "x" * 60_000),
        _message({"STOP": True}),
        _message(["STOP"]),
        _message(None),
        _message("STOP", sender="14155552671,14155552672"),
        _message("STOP", sender="+1 (415) 555-2671 ext. STOP"),
        _message("STOP", sender={"number": SENDER}),
        _message("STOP", sender=None),
    ]
    for document in hostile:
        response = await _post(tenant, url, document)
        assert response.status_code == 200, response.text
        assert response.json()["applied"] == 0
    assert await _suppressed(tenant) == []


async def test_an_unsigned_or_foreign_signed_stop_is_401(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    url = await _url(tenant, sandbox)
    document = _message("STOP")
    unsigned = await tenant.api.post(url, content=json.dumps(document))
    assert unsigned.status_code == 401
    body, headers = _signed(document, secret="another-accounts-secret")
    assert (await tenant.api.post(url, content=body, headers=headers)).status_code == 401
    assert await _suppressed(tenant) == []


async def test_a_stop_to_one_tenants_number_spares_another_tenant(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    other = await make_tenant(services, tenant.api, "other")
    url = await _url(tenant, sandbox)
    await _url(other, sandbox)
    response = await _post(tenant, url, _message("STOP"))
    assert response.json()["applied"] == 1
    assert await _suppressed(tenant) == ["+" + SENDER]
    assert await _suppressed(other) == []
