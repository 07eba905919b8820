"""Hostile notice targets in ``PATCH /v1/settings``: an operations URL at a private
range, loopback or the metadata service is refused by the classifier (no connection is
made), and a contact address that is huge, several, or smuggles a header is refused."""

from __future__ import annotations

import pytest

from homing.services import Services
from tests.conftest import TenantClient
from tests.webhooks.receiver import Receiver

PRIVATE_URLS = [
    pytest.param("https://169.254.169.254/latest/meta-data/", id="metadata"),
    pytest.param("https://[fd00:ec2::254]/", id="metadata-v6"),
    pytest.param("https://10.0.0.1/ops", id="rfc1918"),
    pytest.param("https://192.168.1.1/ops", id="rfc1918-192"),
    pytest.param("https://[::ffff:10.0.0.1]/ops", id="ipv4-mapped"),
    pytest.param("https://0x7f000001/ops", id="hex-loopback"),
    pytest.param("https://localhost/ops", id="localhost"),
    pytest.param("http://ops.example.com/", id="plain-http"),
    pytest.param("https://user:pw@ops.example.com/", id="credentials"),
    pytest.param("file:///etc/passwd", id="file"),
    pytest.param("https://" + "a" * 2100 + ".example/", id="too-long"),
]


@pytest.mark.parametrize("url", PRIVATE_URLS)
async def test_an_operations_url_the_guard_refuses_is_422_and_not_stored(
    services: Services, tenant: TenantClient, url: str
) -> None:
    response = await tenant.patch("/v1/settings", json={"operations_url": url})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] in ("url_refused", "validation_error")
    assert (await services.tenant_settings.get(tenant.tenant_id)).operations_url is None


async def test_a_loopback_operations_url_is_refused_without_a_connection(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    response = await tenant.patch("/v1/settings", json={"operations_url": receiver.url})
    assert response.status_code == 422
    assert receiver.requests == []


CONTACTS = [
    pytest.param("a" * 390 + "@example.com", id="too-long"),
    pytest.param("ops@example.com, evil@example.net", id="two-addresses"),
    pytest.param("ops@example.com\r\nBcc: evil@example.net", id="header-injection"),
    pytest.param("=?utf-8?q?ops?= <ops@example.com>", id="encoded-word"),
    pytest.param("not an address", id="no-at"),
    pytest.param("ops@" + "a" * 300 + ".example", id="long-domain"),
]


@pytest.mark.parametrize("email", CONTACTS)
async def test_a_hostile_contact_email_is_422_and_not_stored(
    services: Services, tenant: TenantClient, email: str
) -> None:
    response = await tenant.patch("/v1/settings", json={"contact_email": email})
    assert response.status_code == 422, response.text
    assert "a" * 100 not in response.text  # not echoed back
    assert (await services.tenant_settings.get(tenant.tenant_id)).contact_email is None


async def test_a_megabyte_contact_email_is_not_read(tenant: TenantClient) -> None:
    body = '{"contact_email": "' + "a" * 1_000_000 + '@example.com"}'
    response = await tenant.patch(
        "/v1/settings", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
