"""Extra header fields are Homing's to write, never a tenant's: the public email routes
refuse ``headers`` (the short way and FastAPI's alike), and a stored payload whose
fields would inject, fold, override or flood ends ``message_permanent`` before any
provider is called. Real API, real database, the sandbox over real SMTP."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from homing.api.routes.email import email_job
from homing.api.schemas.email import EmailCreate
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.e2e.conftest import SLACK_PATH, Sandbox, deliver, job, register
from tests.fixtures import settings_for

EMAIL = {"to": "ada@example.com", "from": "news@acme.example", "subject": "s", "text": "t"}
ONE_CLICK = [["List-Unsubscribe-Post", "List-Unsubscribe=One-Click"]]


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
    )


@pytest.mark.parametrize("headers", [ONE_CLICK, {"List-Unsubscribe-Post": "x"}, []])
async def test_the_public_email_routes_take_no_headers(tenant: TenantClient, headers: Any) -> None:
    single = await tenant.post("/v1/notifications/email", json={**EMAIL, "headers": headers})
    assert single.status_code == 422, single.text
    batch = {"messages": [{**EMAIL, "headers": headers}]}
    many = await tenant.post("/v1/notifications/email/batch", json=batch)
    answer = many.json()  # a batch refuses its items one by one
    assert answer["accepted"] == 0
    assert answer["results"][0]["error"]["details"]["errors"][0]["field"] == "headers"


HOSTILE = {
    "injection": [["X-A", "v\r\nBcc: victim@example.test"]],
    "bare_lf": [["X-A", "v\nBcc: victim@example.test"]],
    "folding": [["X-A", "v\r\n continued"]],
    "name_injection": [["Bcc: victim@example.test\r\nX-A", "v"]],
    "non_ascii_name": [["X-\u00c4", "v"]],
    "oversized": [["X-A", "v" * 100_000]],
    "reserved_to": [["To", "victim@example.test"]],
    "reserved_content": [["Content-Type", "text/html"]],
    "reserved_case": [["dKiM-sIgNaTuRe", "v=1"]],
    "a_thousand": [[f"X-{n}", "v"] for n in range(1000)],
    "twice": [["X-A", "1"], ["x-a", "2"]],
    "not_pairs": "X-A: v",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
async def test_a_stored_hostile_payload_never_reaches_smtp(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, name: str
) -> None:
    assert sandbox.smtp_port is not None
    smtp = {"host": "127.0.0.1", "port": sandbox.smtp_port, "username": "u", "password": "p"}
    await register(tenant, sandbox, "smtp", 1, credentials={**smtp, "starttls": False})
    new = email_job(services.sealer, tenant.tenant_id, EmailCreate.model_validate(EMAIL), None)
    new = replace(new, payload={**new.payload, "headers": HOSTILE[name]})
    principal = await services.tenants.authenticate(tenant.key)
    assert principal is not None
    job_id = (await services.admission.accept(principal, new)).job.id
    assert await deliver(services) == 1
    body = await job(tenant, job_id)
    assert (body["status"], body["error_class"]) == ("FAILED", "message_permanent")
    assert "victim" not in str(body)
    stats = (await sb.http.get("/_sandbox/stats")).json()
    assert stats["requests"]["smtp"] == 0
