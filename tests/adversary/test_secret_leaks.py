"""No plaintext secret anywhere it should not be: a full scenario, then a scan.

The scenario uses every secret Homing handles: the master key, the admin token, tenant
API keys (issued, listed, revoked), provider credentials of all five providers (with
rejected, failing and timing-out sends, so error paths run too), the outbound webhook
signing secret (created, used, rotated, used again with two signatures), inbound
signing secrets of three providers (the sandbox posts signed events over HTTP), the
billing secrets (a signed Paystack and Polar payment) and a dead letter alerted to
Slack. Then the database (every table, every column), every log line (stdlib and
structlog, at debug level), every API response, every Slack post and every webhook
delivery are scanned for each secret. None may appear, except in the one response
that issues it ("shown once"), which may hold that secret and no other.

Supersedes the smaller tests/e2e/test_secrets.py.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from homing.api.app import create_app
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.core import metadata
from homing.webhooks import verify
from tests.figures import record
from tests.fixtures import serving, settings_for
from tests.webhooks.receiver import Receiver

ADMIN_TOKEN = "adm_Secret_Token_Admin_77777"
PAYSTACK_KEY = "sk_live_Paystack_Secret_88888"
POLAR_SECRET = "polar_whs_Secret_99999"
PROVIDER_KEYS = {
    "resend": "re_live_Zq8vTopSecret_11111",
    "sendgrid": "SG.live_TopSecret_22222",
    "mailgun": "key-live-TopSecret-33333",
    "postmark": "pm-server-TopSecret-44444",
}
POSTMARK_ACCOUNT_TOKEN = "pm-account-TopSecret-55555"
SMTP_PASSWORD = "smtp-Passw0rd-TopSecret-66666"
# Where a secret belongs: the tenant's own webhook header goes to the tenant's receiver.
BELONGS = {"tenant webhook header": {"webhook deliveries"}}
# Shown once, by design: the response of the request that issues each secret.
ISSUING = {
    ("POST", "/admin/v1/tenants"): "api_key",
    ("POST", "/v1/api-keys"): "key",
    ("POST", "/v1/webhook-secret"): "secret",
    ("POST", "/v1/webhook-secret/rotate"): "secret",
}


@dataclass
class Seen:
    """Everything that left Homing during the scenario, and the secrets it used."""

    secrets: dict[str, str] = field(default_factory=dict)
    responses: list[tuple[str, str, str]] = field(default_factory=list)  # method, path, text
    issued: list[tuple[str, str]] = field(default_factory=list)  # secret name, response text


@pytest.fixture
def master_key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, master_key: str, sandbox: SandboxServer
) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        master_key,
        admin_token=ADMIN_TOKEN,
        paystack_secret_key=PAYSTACK_KEY,
        polar_webhook_secret=POLAR_SECRET,
        billing_prices="INDIE:NGN:500000",
        webhook_allowed_networks="127.0.0.0/8",
        alert_slack_webhook_url=sandbox.base_url + "/slack/T000/B000/secrets",
        max_attempts=1,
        provider_timeout_seconds=1,
        log_level="debug",
    )


@pytest.fixture
async def homing_url(services: Services) -> AsyncIterator[str]:
    """Homing's API on a loopback port, so the sandbox can post signed events to it
    (uvicorn's own log lines included, at the scan's debug level)."""
    async with serving(create_app(services)) as url:
        yield url


def _recording(seen: Seen) -> Any:
    async def hook(response: httpx.Response) -> None:
        await response.aread()
        request = response.request
        seen.responses.append((request.method, request.url.path, _response_text(response)))

    return hook


def _response_text(response: httpx.Response) -> str:
    headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
    return f"{response.status_code}\n{headers}\n\n{response.text}"


class Scenario:
    """The API calls of the scenario, through a client that records every response."""

    def __init__(self, api: httpx.AsyncClient, sb: httpx.AsyncClient, seen: Seen) -> None:
        self.api, self.sb, self.seen = api, sb, seen
        self.headers: dict[str, str] = {}

    async def call(self, method: str, path: str, expect: int, **kwargs: Any) -> Any:
        kwargs.setdefault("headers", self.headers)
        response = await self.api.request(method, path, **kwargs)
        assert response.status_code == expect, f"{method} {path}: {response.text}"
        return response.json() if response.content else None

    async def issue(self, method: str, path: str, expect: int, name: str, **kw: Any) -> Any:
        body = await self.call(method, path, expect, **kw)
        secret = body[ISSUING[(method, path)]]
        self.seen.secrets[name] = secret
        self.seen.issued.append((name, self.seen.responses[-1][2]))
        return body


async def _tenant(s: Scenario) -> None:
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    body = await s.issue(
        "POST",
        "/admin/v1/tenants",
        201,
        "tenant api key",
        json={"name": "acme", "plan": "STARTUP"},
        headers=admin,
    )
    s.headers = {"Authorization": f"Bearer {body['api_key']}"}
    await s.call("GET", f"/admin/v1/tenants/{body['id']}", 200, headers=admin)
    second = await s.issue("POST", "/v1/api-keys", 201, "second api key", json={"name": "ci"})
    await s.call("GET", "/v1/api-keys", 200)
    await s.call("DELETE", f"/v1/api-keys/{second['id']}", 204)


async def _providers(s: Scenario, sandbox: SandboxServer) -> dict[str, str]:
    ids = {}
    for priority, (provider, key) in enumerate(PROVIDER_KEYS.items(), start=1):
        credentials: dict[str, Any] = {"api_key": key}
        if provider == "mailgun":
            credentials["domain"] = "mg.example.com"
        if provider == "postmark":
            credentials["account_token"] = POSTMARK_ACCOUNT_TOKEN
        body = {
            "channel": "email",
            "provider": provider,
            "credentials": credentials,
            "config": {"base_url": sandbox.provider_base_url(provider)},
            "priority": priority,
        }
        ids[provider] = (await s.call("POST", "/v1/providers", 201, json=body))["id"]
    assert sandbox.smtp_port is not None
    smtp = {
        "host": "127.0.0.1",
        "port": sandbox.smtp_port,
        "username": "u",
        "password": SMTP_PASSWORD,
    }
    body = {"channel": "email", "provider": "smtp", "credentials": smtp, "priority": 9}
    ids["smtp"] = (await s.call("POST", "/v1/providers", 201, json=body))["id"]
    await s.call("PATCH", f"/v1/providers/{ids['sendgrid']}", 200, json={"priority": 2})
    await s.call("GET", "/v1/providers", 200)
    return ids


async def _emails(s: Scenario, services: Services, ids: dict[str, str]) -> list[str]:
    # Resend rejects the key, SendGrid fails, Mailgun hangs, Postmark accepts: every
    # error path runs before a success. Then a message nobody accepts: a dead letter.
    for provider, rule in [
        ("resend", {"status": 401}),
        ("sendgrid", {"status": 503}),
        ("mailgun", {"mode": "timeout"}),
    ]:
        response = await s.sb.post("/_sandbox/faults", json={"provider": provider, **rule})
        response.raise_for_status()
    email = {
        "to": "ada@example.com",
        "from": "Acme <hello@acme.example>",
        "subject": "Welcome",
        "text": "Hello Ada",
    }
    first = (await s.call("POST", "/v1/notifications/email", 202, json=email))["id"]
    batch = {"messages": [{**email, "to": f"user{i}@example.com"} for i in range(3)]}
    await s.call("POST", "/v1/notifications/email/batch", 202, json=batch)
    await services.worker().run(once=True)
    for provider in ("postmark", "smtp"):
        await s.call("PATCH", f"/v1/providers/{ids[provider]}", 200, json={"enabled": False})
    dead = (await s.call("POST", "/v1/notifications/email", 202, json=email))["id"]
    await services.worker().run(once=True)
    await s.sb.delete("/_sandbox/faults")
    for provider in ("postmark", "smtp"):
        await s.call("PATCH", f"/v1/providers/{ids[provider]}", 200, json={"enabled": True})
    await s.call("GET", f"/v1/jobs/{first}", 200)
    assert (await s.call("GET", f"/v1/jobs/{dead}", 200))["status"] == "FAILED"
    await s.call("POST", f"/v1/jobs/{dead}/retry", 202)
    await services.worker().run(once=True)
    await s.call("GET", "/v1/jobs", 200)
    return [first, dead]


async def _webhooks(s: Scenario, services: Services, receiver: Receiver) -> None:
    await s.issue("POST", "/v1/webhook-secret", 201, "webhook secret")
    hook = {
        "url": receiver.url + "/hook",
        "payload": {"order": 42},
        "headers": {"X-Customer-Token": "cust-Header-Secret-12121"},
    }
    s.seen.secrets["tenant webhook header"] = "cust-Header-Secret-12121"
    await s.call("POST", "/v1/notifications/webhook", 202, json=hook)
    await services.worker().run(once=True)
    await s.issue("POST", "/v1/webhook-secret/rotate", 200, "rotated webhook secret")
    await s.call("POST", "/v1/notifications/webhook", 202, json=hook)
    await services.worker().run(once=True)
    await s.call("GET", "/v1/webhook-secret", 200)
    first, second = receiver.requests
    verify(s.seen.secrets["webhook secret"], first.headers, first.body)
    for name in ("webhook secret", "rotated webhook secret"):  # both sign in the overlap
        verify(s.seen.secrets[name], second.headers, second.body)


async def _inbound(s: Scenario, services: Services, ids: dict[str, str], homing_url: str) -> None:
    for provider in ("resend", "mailgun", "postmark", "sendgrid"):
        email = {
            "to": f"{provider}@example.com",
            "from": "hello@acme.example",
            "subject": "Pinned",
            "text": "x",
            "provider": provider,
        }
        await s.call("POST", "/v1/notifications/email", 202, json=email)
    await services.worker().run(once=True)
    keys = (await s.sb.get("/_sandbox/keys")).json()
    s.seen.secrets["resend inbound secret"] = keys["resend"]["signing_secret"]
    s.seen.secrets["mailgun inbound key"] = keys["mailgun"]["signing_secret"]
    s.seen.secrets["postmark inbound password"] = keys["postmark"]["basic_auth"]["password"]
    for provider in ("resend", "mailgun", "postmark", "sendgrid"):
        info = await s.call(
            "PUT", f"/v1/providers/{ids[provider]}/inbound", 200, json=keys[provider]
        )
        await s.call("GET", f"/v1/providers/{ids[provider]}/inbound", 200)
        event = {
            "provider": provider,
            "message_to": f"{provider}@example.com",
            "type": "delivered",
            "target_url": homing_url + info["path"],
        }
        posted = await s.sb.post("/_sandbox/events", json=event)
        assert posted.status_code == 200, posted.text
        s.seen.responses.append(("POST", "/_sandbox/events", posted.text))
    await s.call("GET", "/v1/reports/events", 200)


async def _billing(s: Scenario, tenant_id: str) -> None:
    data = {
        "id": 1,
        "status": "success",
        "reference": "r1",
        "amount": 500000,
        "currency": "NGN",
        "metadata": {"tenant_id": tenant_id, "plan": "INDIE"},
    }
    body = json.dumps({"event": "charge.success", "data": data}).encode()
    signature = hmac.new(PAYSTACK_KEY.encode(), body, hashlib.sha512).hexdigest()
    await s.call(
        "POST",
        "/inbound/billing/paystack",
        200,
        content=body,
        headers={"x-paystack-signature": signature},
    )
    polar = json.dumps({"type": "order.paid", "data": {"id": "o1"}}).encode()
    stamp = str(int(time.time()))
    digest = hmac.new(POLAR_SECRET.encode(), f"evt_1.{stamp}.".encode() + polar, hashlib.sha256)
    headers = {
        "webhook-id": "evt_1",
        "webhook-timestamp": stamp,
        "webhook-signature": "v1," + base64.b64encode(digest.digest()).decode(),
    }
    await s.call("POST", "/inbound/billing/polar", 200, content=polar, headers=headers)


async def _dump(services: Services) -> str:
    rows: list[str] = []
    async with services.db.transaction() as conn:
        for table in metadata.sorted_tables:
            for row in (await conn.execute(select(table))).all():
                rows.append(f"{table.name}: {tuple(row)!r}")
    return "\n".join(rows)


def _leaks(secret: str, places: dict[str, str]) -> list[str]:
    # The raw form, and the forms a secret takes when serialised (JSON, repr, base64).
    forms = {secret, json.dumps(secret)[1:-1], base64.b64encode(secret.encode()).decode()}
    return [place for place, text in places.items() if any(f in text for f in forms)]


async def test_no_secret_appears_in_the_database_logs_or_responses(
    services: Services,
    sandbox: SandboxServer,
    receiver: Receiver,
    homing_url: str,
    log_stream: io.StringIO,
    master_key: str,
) -> None:
    seen = Seen()
    seen.secrets.update({f"{p} api key": k for p, k in PROVIDER_KEYS.items()})
    seen.secrets.update(
        {
            "postmark account token": POSTMARK_ACCOUNT_TOKEN,
            "smtp password": SMTP_PASSWORD,
            "admin token": ADMIN_TOKEN,
            "paystack secret": PAYSTACK_KEY,
            "polar secret": POLAR_SECRET,
            "master key": master_key,
        }
    )
    hooks = {"response": [_recording(seen)]}
    transport = httpx.ASGITransport(app=create_app(services))
    async with (
        httpx.AsyncClient(
            transport=transport, base_url="http://homing.test", event_hooks=hooks
        ) as api,
        httpx.AsyncClient(base_url=sandbox.base_url, timeout=10) as sb,
    ):
        scenario = Scenario(api, sb, seen)
        await _tenant(scenario)
        tenant_id = (await scenario.call("GET", "/v1/usage", 200)) and await _tenant_id(services)
        ids = await _providers(scenario, sandbox)
        await _emails(scenario, services, ids)
        await _webhooks(scenario, services, receiver)
        await _inbound(scenario, services, ids, homing_url)
        await _billing(scenario, tenant_id)
        slack = (await sb.get("/_sandbox/slack")).text
        delivered = (await sb.get("/_sandbox/messages")).text
    await sandbox.state.drain_posts()
    assert "dead-lettered" in log_stream.getvalue() or "dead letter" in slack.lower()
    places = {
        "database": await _dump(services),
        "logs": log_stream.getvalue(),
        "slack": slack,
        "provider messages": delivered,
        "webhook deliveries": "\n".join(f"{r.raw_headers!r} {r.body!r}" for r in receiver.requests),
    }
    places.update({f"response {i}: {m} {p}": t for i, (m, p, t) in enumerate(seen.responses)})
    issued_texts = {text for _, text in seen.issued}
    leaks: list[str] = []
    for name, secret in seen.secrets.items():
        for place in _leaks(secret, places):
            if place in BELONGS.get(name, set()):
                continue
            if place.startswith("response") and places[place] in issued_texts:
                if (name, places[place]) in seen.issued:
                    continue  # the one response that issues it
            leaks.append(f"{name} in {place}")
    record(
        "secrets",
        database=services.db.dialect,
        secrets=len(seen.secrets),
        responses=len(seen.responses),
        log_lines=places["logs"].count("\n"),
        leaks=len(leaks),
    )
    assert len(seen.responses) >= 40
    assert not leaks, "\n".join(leaks)


async def _tenant_id(services: Services) -> str:
    page = await services.tenants.page(limit=10)
    [tenant] = page.tenants
    return tenant.id
