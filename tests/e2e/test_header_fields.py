"""An email job's extra header fields (RFC 8058's pair) reach every email vendor of the
sandbox and its SMTP sink, over real HTTP and SMTP, on SQLite and PostgreSQL; in a
vendor batch each item keeps its own fields.

The public API does not take ``headers`` (Homing writes them itself), so the jobs here
are accepted through the admission manager with the payload the unsubscribe work will
build; everything after the accept is the real path.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from homing.api.routes.email import email_job
from homing.api.schemas.email import EmailCreate
from homing.email_headers import as_payload, email_headers
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.e2e.conftest import SLACK_PATH, Sandbox, deliver, job, register
from tests.fixtures import settings_for

RFC_8058 = [
    ["List-Unsubscribe", "<https://example.test/u/abc>"],
    ["List-Unsubscribe-Post", "List-Unsubscribe=One-Click"],
]


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
        batch_window_seconds=0.3,
    )


async def accept(
    services: Services, tenant: TenantClient, to: str, headers: list[list[str]] | None
) -> str:
    """Accept one email job for ``to`` carrying ``headers``; its id."""
    body = EmailCreate.model_validate(
        {"to": to, "from": "Acme <news@acme.example>", "subject": "News", "text": "Hello"}
    )
    new = email_job(services.sealer, tenant.tenant_id, body, None)
    if headers is not None:
        new = replace(new, payload={**new.payload, "headers": as_payload(email_headers(headers))})
    principal = await services.tenants.authenticate(tenant.key)
    assert principal is not None
    accepted = await services.admission.accept(principal, new)
    return accepted.job.id


def smtp_credentials(sandbox: SandboxServer) -> dict[str, Any]:
    assert sandbox.smtp_port is not None
    return {
        "host": "127.0.0.1",
        "port": sandbox.smtp_port,
        "username": "mailer",
        "password": "smtp-pass-123456",
        "starttls": False,
    }


def fields(message: dict[str, Any], vendor: str) -> list[list[str]]:
    """The RFC 8058 pair among the recorded fields (SMTP records every field)."""
    recorded: list[list[str]] = message["headers"]
    if vendor == "smtp":
        return [pair for pair in recorded if pair[0].startswith("List-Unsubscribe")]
    return recorded


@pytest.mark.parametrize("vendor", ["sendgrid", "resend", "postmark", "mailgun", "smtp"])
async def test_the_one_click_pair_arrives_at_every_vendor(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, vendor: str
) -> None:
    credentials = smtp_credentials(sandbox) if vendor == "smtp" else None
    await register(tenant, sandbox, vendor, 1, credentials=credentials)
    job_id = await accept(services, tenant, "ada@example.com", RFC_8058)
    assert await deliver(services) == 1
    assert (await job(tenant, job_id))["status"] == "COMPLETED"
    [message] = await sb.messages(vendor)
    assert message["job_id"] == job_id
    assert sorted(fields(message, vendor)) == RFC_8058


@pytest.mark.parametrize("vendor", ["resend", "postmark"])
async def test_a_vendor_batch_carries_each_jobs_own_fields(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, vendor: str
) -> None:
    await register(tenant, sandbox, vendor, 1)
    campaign = [["X-Campaign", "spring"]]
    wanted = {
        await accept(services, tenant, "ada@example.com", RFC_8058): RFC_8058,
        await accept(services, tenant, "grace@example.com", campaign): campaign,
        await accept(services, tenant, "alan@example.com", None): [],
    }
    assert await deliver(services) == 3
    stats = (await sb.http.get("/_sandbox/stats")).json()
    assert stats["requests"][vendor] == 1  # one batch call
    recorded = {m["job_id"]: sorted(m["headers"]) for m in await sb.messages(vendor)}
    assert recorded == wanted


async def test_a_long_unsubscribe_link_arrives_over_smtp_as_it_was_given(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "smtp", 1, credentials=smtp_credentials(sandbox))
    link = "<https://example.test/u/" + "t" * 800 + ">"
    await accept(services, tenant, "ada@example.com", [["List-Unsubscribe", link]])
    assert await deliver(services) == 1
    [message] = await sb.messages("smtp")
    assert fields(message, "smtp") == [["List-Unsubscribe", link]]
