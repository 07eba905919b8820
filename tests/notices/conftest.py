"""Notice and alert fixtures: the sandbox as every vendor and as Slack, loopback open to
webhooks (the ``receiver`` of ``tests/conftest.py`` is the tenant's operations URL), and
a platform tenant whose sandbox provider sends Homing's own mail."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant
from tests.e2e.conftest import register
from tests.fixtures import settings_for

SLACK_PATH = "/slack/T000/B000/notices"
PLATFORM_FROM = "Homing <ops@homing.example>"
OPERATOR = "oncall@operator.example"


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
        webhook_allowed_networks="127.0.0.0/8",
        webhook_timeout_seconds=2,
        platform_email_from=PLATFORM_FROM,
        alert_email=OPERATOR,
        alert_provider_min_calls=4,
        alert_dead_letter_spike=3,
    )


@pytest.fixture
async def platform(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer
) -> TenantClient:
    """The platform tenant, with the sandbox's SendGrid as its provider. Its id is set
    as HOMING_PLATFORM_TENANT_ID would set it, before platform email is first used."""
    client = await make_tenant(services, api, "homing-platform")
    await register(client, sandbox, "sendgrid", 1)
    services.settings = services.settings.changed(platform_tenant_id=client.tenant_id)
    services.email_alerts()  # as build() wires it when the setting is there at start
    return client
