"""An RFC 2047 encoded word whose text is a line break injects nothing over SMTP.

Python's ``email`` package decodes encoded words in a header it is given, and before
the CVE-2024-6923 fix (3.11.10, 3.12.5) wrote the decoded CR LF out raw: a subject (or
template data rendered into one) could add a Reply-To, a Content-Type and a body of
the tenant's own. Homing encodes the subject itself, so the message that reaches the
sandbox's SMTP server holds exactly the fields Homing wrote and the subject arrives as
the text the tenant sent. Real API, real worker, the sandbox over real SMTP.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.e2e.conftest import SLACK_PATH, Sandbox, deliver, job, register
from tests.e2e.test_header_fields import smtp_credentials
from tests.fixtures import settings_for

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)

SUBJECT = (
    "=?utf-8?q?Invoice=0D=0AReply-To=3A_evil=40attacker.example=0D=0A"
    "Content-Type=3A_text/html=0D=0A=0D=0A<h1>Pay_here</h1>?="
)
NAME = "=?utf-8?q?Ann=0D=0AX-Injected=3A_x?="
# Every field Homing writes on a text-only message, in order: nothing more.
FIELDS = [
    "date",
    "from",
    "to",
    "subject",
    "message-id",
    "x-homing-job-id",
    "content-type",
    "content-transfer-encoding",
    "mime-version",
]
EMAIL = {"to": "ada@example.com", "from": "Acme <news@acme.example>", "text": "Hello"}


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


async def _arrived(
    services: Services, tenant: TenantClient, sb: Sandbox, body: dict[str, Any]
) -> dict[str, Any]:
    """The message the sandbox's SMTP server received for ``body``, sent through the API."""
    response = await tenant.post("/v1/notifications/email", json=body)
    assert response.status_code == 202, response.text
    assert await deliver(services) == 1
    assert (await job(tenant, response.json()["id"]))["status"] == "COMPLETED"
    [message] = await sb.messages("smtp")
    return message


def _assert_nothing_injected(message: dict[str, Any], subject: str) -> None:
    assert [name.lower() for name, _ in message["headers"]] == FIELDS
    assert message["subject"] == subject  # the text the tenant sent, not its decoding
    assert (message["text"].strip(), message["html"]) == ("Hello", None)
    assert "attacker" not in str(message["headers"])


async def test_an_encoded_word_subject_adds_no_field_and_no_body(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "smtp", 1, credentials=smtp_credentials(sandbox))
    message = await _arrived(services, tenant, sb, {**EMAIL, "subject": SUBJECT})
    _assert_nothing_injected(message, SUBJECT)


async def test_template_data_in_a_subject_adds_no_field(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "smtp", 1, credentials=smtp_credentials(sandbox))
    created = await tenant.post("/v1/templates", json={"key": "hello"})
    assert created.status_code == 201, created.text
    email = {"subject": "Hello {{ name }}", "text": "Hello"}
    version = await tenant.post("/v1/templates/hello/versions", json={"email": email})
    assert version.status_code == 201, version.text
    published = await tenant.post(f"/v1/templates/hello/versions/{version.json()['id']}/publish")
    assert published.status_code == 200, published.text
    body = {"to": EMAIL["to"], "from": EMAIL["from"], "template": "hello", "data": {"name": NAME}}
    message = await _arrived(services, tenant, sb, body)
    _assert_nothing_injected(message, f"Hello {NAME}")
    assert not any(name.lower() == "x-injected" for name, _ in message["headers"])


@pytest.mark.parametrize(
    "sender",
    [
        "=?utf-8?q?Acme=0D=0AReply-To=3A_evil=40attacker.example?= <news@acme.example>",
        '"=?utf-8?b?QWNtZQ0KWC1JOiB4?=" <news@acme.example>',
        "Acme =?utf-8?q?=0A?= <news@acme.example>",
    ],
)
async def test_a_from_name_holding_an_encoded_word_is_refused(
    tenant: TenantClient, sender: str
) -> None:
    # From and To are never encoded by Homing: a name that a reader would decode is refused.
    response = await tenant.post(
        "/v1/notifications/email", json={**EMAIL, "subject": "s", "from": sender}
    )
    assert response.status_code == 422, response.text
