"""One mailbox per address, parsed once: a crafted ``to`` or ``from`` cannot reach a
suppressed mailbox, name several recipients for one quota unit, dodge a per-recipient
pacing rule or reach a provider in any form but the one canonical mailbox. Through the
real API and the sandbox over real HTTP and SMTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, register
from tests.fixtures import settings_for

PROVIDERS = ("resend", "sendgrid", "postmark", "mailgun", "smtp")
HOSTILE = [
    "decoy@x.com <s@y.com>",
    "a@x.com <b@y.com>",
    "a@x.com, b@y.com",
    "<a@x.com>, <b@y.com>",
    "g: a@x.com, b@y.com;",
    "(x)a@x.com",
    "a@x.com (x)",
    "a(x)@x.com",
    "=?utf-8?q?s@y.com?= <a@x.com>",
    "=?utf-8?b?cy55LmNvbQ==?= <a@x.com>",
    "a@x.com\r\nBcc: b@y.com",
    "Ada\n <a@x.com>",
    "a@[10.0.0.1]",
    '"s@y.com"@x.com',
]


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        provider_allowed_networks="",  # the sandbox is reached as the sandbox, not loopback
        max_body_bytes=4_000_000,  # so a 1 MB address is the address's problem
        sandbox_urls=f"{sandbox.base_url},smtp://127.0.0.1:{sandbox.smtp_port}",
    )


def _email(**fields: Any) -> dict[str, Any]:
    return {
        "to": "ada@example.com",
        "from": "Acme <hello@acme.example>",
        "subject": "Hello",
        "text": "Hi",
        **fields,
    }


async def _register(tenant: TenantClient, sandbox: SandboxServer, provider: str, **kw: Any) -> None:
    if provider == "smtp":
        smtp = {"host": "127.0.0.1", "port": sandbox.smtp_port, "starttls": False}
        await register(tenant, sandbox, provider, 1, credentials=smtp)
        return
    if not kw:
        await register(tenant, sandbox, provider, 1)
        return
    credentials: dict[str, Any] = {"api_key": f"{provider}-key-{tenant.tenant_id[-6:]}"}
    config = {"base_url": sandbox.provider_base_url(provider), **kw}
    body = {"channel": "email", "provider": provider, "credentials": credentials}
    response = await tenant.post("/v1/providers", json={**body, "config": config})
    assert response.status_code == 201, response.text


async def _deliver(services: Services) -> None:
    await services.worker().run(once=True)


async def test_no_crafted_address_reaches_a_suppressed_mailbox(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await _register(tenant, sandbox, "resend")
    added = await tenant.post("/v1/suppressions", json={"channel": "email", "address": "s@y.com"})
    assert added.status_code == 201, added.text
    for to in ("decoy@x.com <s@y.com>", "S@Y.COM", "Someone <S@y.COM>", "s@Y.com"):
        response = await tenant.post("/v1/notifications/email", json=_email(to=to))
        if response.status_code == 202:
            assert response.json()["status"] == "SUPPRESSED", to
        else:
            assert response.status_code == 422, (to, response.text)
    await _deliver(services)
    assert await sb.messages() == [], "nothing went to the suppressed mailbox"


async def test_an_address_names_exactly_one_mailbox_on_every_path(
    services: Services, tenant: TenantClient, api: httpx.AsyncClient
) -> None:
    for bad in HOSTILE:
        for field in ("to", "from"):
            single = await tenant.post("/v1/notifications/email", json=_email(**{field: bad}))
            assert single.status_code == 422, (field, bad, single.text)
            assert single.json()["error"]["code"] == "validation_error", (field, bad)
            batch = await tenant.post(
                "/v1/notifications/email/batch", json={"messages": [_email(**{field: bad})]}
            )
            assert batch.status_code == 202, (field, bad, batch.text)
            [item] = batch.json()["results"]
            assert (batch.json()["accepted"], item.get("id")) == (0, None), (field, bad)
            assert item["error"]["code"] == "validation_error", (field, bad)
    huge = await tenant.post("/v1/notifications/email", json=_email(to="a" * 1_000_000 + "@x.com"))
    assert huge.status_code == 422
    assert (await api.get("/healthz")).status_code == 200
    usage = (await tenant.get("/v1/usage")).json()
    assert usage["used"]["email"] == 0, "no quota unit went to a refused address"


async def test_every_provider_receives_the_one_canonical_mailbox(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    for provider in PROVIDERS:
        await _register(tenant, sandbox, provider)
    for provider in PROVIDERS:
        body = _email(
            to="Ada Lovelace <ada@EXAMPLE.com>", provider=provider, **{"from": "hello@ACME.example"}
        )
        response = await tenant.post("/v1/notifications/email", json=body)
        assert response.status_code == 202, response.text
    await _deliver(services)
    received = await sb.messages()
    assert sorted(m["provider"] for m in received) == sorted(PROVIDERS)
    for message in received:
        assert message["to"] == ["ada@example.com"], message
        assert message["from"] == "hello@acme.example", message


async def test_a_display_name_does_not_dodge_a_per_recipient_pacing_rule(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    rule = {"scope": "recipient", "limit": 1, "per_seconds": 3600}
    await _register(tenant, sandbox, "resend", rate_rules=[rule])
    for to in ("ada@example.com", "Ada <ada@example.com>", "Ada <ada@EXAMPLE.COM>"):
        response = await tenant.post("/v1/notifications/email", json=_email(to=to))
        assert response.status_code == 202, response.text
    await _deliver(services)
    received = await sb.messages()
    assert len(received) == 1, f"one a hour to ada@example.com, got {len(received)}"
