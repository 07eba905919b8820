"""A tenant points a provider at the inside of the network (issue 12, item 2).

The operator allows loopback (``HOMING_PROVIDER_ALLOWED_NETWORKS``, as the test settings
do, so the sandbox can be used); everything else that is not the vendor's official API
over https must be refused with 422 ``endpoint_refused`` — at registration and again at
send time — without a single connection attempt outside loopback. Names resolve
through a stub (``NetworkRecorder``); no packet leaves the machine.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from homing.api.app import create_app
from homing.channels import Channel
from homing.models import ProviderAccount, new_id
from homing.services import Services, build
from homing.settings import Settings
from homing.store.providers import seal_credentials
from tests.adversary.endpoints_helpers import (
    LoopbackServer,
    NetworkRecorder,
    answer,
    read_head,
)
from tests.conftest import TenantClient, make_tenant

STUB_DNS = {
    "internal.example": "10.0.0.1",
    "metadata.example": "169.254.169.254",
    "v6-internal.example": "fd00::1",
    "evil.example": "93.184.215.14",  # public: only the vendors' hosts may be
}

REFUSED_BASE_URLS = [
    "http://10.0.0.1/",
    "http://169.254.169.254/latest/meta-data",
    "http://10.0.0.1:6379/",  # an odd port inside
    "http://internal.example:8080/",  # resolves to 10.0.0.1
    "http://metadata.example/",  # resolves to 169.254.169.254
    "https://v6-internal.example/",  # resolves to fd00::1
    "http://api.sendgrid.com/",  # the official host, but not over https
    "https://api.sendgrid.com:8443/",  # the official host on an odd port
    "https://api.resend.com/",  # another vendor's host
    "https://evil.example/",  # public, but neither the vendor's nor allowed
    "http://admin:secret@10.0.0.1/",
    "http://api.sendgrid.com@10.0.0.1/",
    "http://[fd00::1]/",
    "http://[::ffff:10.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://167772161/",  # 10.0.0.1 as one decimal number
    "http://0x0a000001/",
    "http://10.1/",
    "http://0xa9.254.169.254/",
]


def _provider(base_url: str) -> dict[str, Any]:
    return {
        "channel": "email",
        "provider": "sendgrid",
        "credentials": {"api_key": "SG.adversary_123456"},
        "config": {"base_url": base_url},
        "priority": 1,
    }


@pytest.fixture
def net(monkeypatch: pytest.MonkeyPatch) -> NetworkRecorder:
    return NetworkRecorder(dict(STUB_DNS)).install(monkeypatch)


@pytest.mark.parametrize("base_url", REFUSED_BASE_URLS)
async def test_a_provider_base_url_inside_the_network_is_refused_without_a_connection(
    tenant: TenantClient, net: NetworkRecorder, base_url: str
) -> None:
    response = await tenant.post("/v1/providers", json=_provider(base_url))
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "endpoint_refused", response.text
    assert net.outside == [], "a connection was attempted outside loopback"
    assert "10.0.0.1" not in response.text and "169.254" not in response.text


async def test_a_stored_account_that_points_inside_is_refused_at_send_time(
    services: Services, tenant: TenantClient, net: NetworkRecorder
) -> None:
    """An account stored before the rule (or by any other way in) is checked again
    right before the call: the attempt is provider_permanent and nothing connects."""
    account_id = new_id()
    credentials = {"api_key": "SG.adversary_123456"}
    await services.providers.add(
        ProviderAccount(
            id=account_id,
            tenant_id=tenant.tenant_id,
            channel=Channel.EMAIL,
            vendor="sendgrid",
            priority=1,
            enabled=True,
            credentials_sealed=seal_credentials(services.sealer, account_id, credentials),
            credentials_preview="api_key=SG…",
            config={"base_url": "http://internal.example/"},
            created_at=datetime.now(UTC),
        )
    )
    body = {"to": "ada@example.com", "from": "a@acme.example", "subject": "s", "text": "t"}
    accepted = await tenant.post("/v1/notifications/email", json=body)
    assert accepted.status_code == 202, accepted.text
    await services.worker().run(once=True)
    job = (await tenant.get(f"/v1/jobs/{accepted.json()['id']}")).json()
    assert job["attempts"], job
    assert {a["outcome"] for a in job["attempts"]} == {"provider_permanent"}, job
    assert net.outside == []


async def test_a_redirect_from_an_allowed_endpoint_is_not_followed(
    tenant: TenantClient, net: NetworkRecorder
) -> None:
    async with LoopbackServer() as elsewhere:

        async def redirect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await read_head(reader)
            writer.write(answer("302 Found", headers=f"Location: {elsewhere.url}/v3/scopes\r\n"))
            await writer.drain()

        async with LoopbackServer(redirect) as allowed:
            response = await tenant.post("/v1/providers", json=_provider(allowed.url))
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "endpoint_refused", response.text
    assert allowed.connections == 1
    assert elsewhere.connections == 0, "the redirect was followed"
    assert "127.0.0.1" in net.connects  # the recorder sees Homing's connections
    assert net.outside == []


async def test_the_credential_check_never_echoes_what_the_endpoint_answered(
    tenant: TenantClient, net: NetworkRecorder
) -> None:
    banner = b"INTERNAL-ADMIN-PANEL root:x:0:0 build 7f3a"

    async def reject(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        body = b'{"errors": [{"message": "' + banner + b'", "field": null}]}'
        writer.write(answer("401 Unauthorized", body))
        await writer.drain()

    async with LoopbackServer(reject) as server:
        response = await tenant.post("/v1/providers", json=_provider(server.url))
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_credentials"
    assert "401" in response.json()["error"]["message"]
    assert banner.decode() not in response.text
    assert "INTERNAL" not in response.text


async def test_an_smtp_host_on_loopback_is_refused_unless_the_operator_allows_it(
    settings: Settings, net: NetworkRecorder
) -> None:
    strict = settings.changed(provider_allowed_networks="")
    services = await build(strict)
    try:
        transport = httpx.ASGITransport(app=create_app(services))
        async with (
            httpx.AsyncClient(transport=transport, base_url="http://homing.test") as api,
            LoopbackServer() as smtp,
        ):
            tenant = await make_tenant(services, api, f"smtp-{new_id()[-6:]}")
            for host in ("127.0.0.1", "localhost", "10.0.0.1", "internal.example"):
                credentials = {"host": host, "port": smtp.port, "starttls": False}
                response = await tenant.post(
                    "/v1/providers",
                    json={"channel": "email", "provider": "smtp", "credentials": credentials},
                )
                assert response.status_code == 422, (host, response.text)
                assert response.json()["error"]["code"] == "endpoint_refused", response.text
            assert smtp.connections == 0, "Homing connected to a loopback SMTP server"
    finally:
        await services.aclose()
    assert net.outside == []
