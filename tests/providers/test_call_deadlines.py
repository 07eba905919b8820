"""Credential checks and sending-domain calls end at the call deadline, on SQLite and
PostgreSQL, against a loopback server that accepts connections and never answers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from homing.channels import Channel
from homing.errors import InvalidRequest, ProviderTimeout
from homing.managers.accounts import NewProvider
from homing.models import Plan, ProviderAccount, new_id
from homing.services import Services
from homing.settings import Settings
from homing.store.providers import seal_credentials

DEADLINE = 0.5


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # Shorter than the per-read timeout (2 s): only the deadline can end these calls.
    return settings.changed(provider_deadline_seconds=DEADLINE)


@pytest.fixture
async def silent() -> AsyncIterator[str]:
    """The base URL of a server that reads requests and never answers."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await reader.read(1024):
                pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()


async def test_a_credential_check_that_never_answers_is_a_provider_timeout(
    services: Services, silent: str
) -> None:
    tenant, _ = await services.tenants.create("t", Plan.STARTUP)
    new = NewProvider(
        tenant_id=tenant.id,
        channel=Channel.EMAIL,
        provider="sendgrid",
        credentials={"api_key": "SG.k"},
        config={"base_url": silent},
        priority=1,
    )
    with pytest.raises(ProviderTimeout) as raised:
        await asyncio.wait_for(services.accounts.register(new), timeout=10)
    assert raised.value.code == "provider_timeout"
    assert raised.value.details == {"deadline_seconds": DEADLINE}
    assert await services.providers.all(tenant.id) == []


async def test_a_domain_call_that_never_answers_is_a_provider_timeout(
    services: Services, silent: str
) -> None:
    tenant, _ = await services.tenants.create("t", Plan.STARTUP)
    account_id = new_id()
    account = ProviderAccount(
        id=account_id,
        tenant_id=tenant.id,
        channel=Channel.EMAIL,
        vendor="sendgrid",
        priority=1,
        enabled=True,
        credentials_sealed=seal_credentials(services.sealer, account_id, {"api_key": "SG.k"}),
        credentials_preview="api_key=…",
        config={"base_url": silent},
        created_at=datetime.now(UTC),
    )
    await services.providers.add(account)
    register = services.domains.register(tenant.id, "mail.example.com", account_id)
    with pytest.raises(ProviderTimeout):
        await asyncio.wait_for(register, timeout=10)
    assert await services.domains.all(tenant.id) == []


@pytest.mark.parametrize("timeout", ["inf", "-inf", "nan", -1, 0, 1e308, "10", True, "soon", None])
async def test_a_tenant_timeout_beyond_the_deadline_is_refused(
    services: Services, timeout: object
) -> None:
    tenant, _ = await services.tenants.create("t", Plan.STARTUP)
    new = NewProvider(
        tenant_id=tenant.id,
        channel=Channel.EMAIL,
        provider="smtp",
        credentials={"host": "127.0.0.1", "port": 9},
        config={"timeout": timeout},
        priority=1,
    )
    with pytest.raises(InvalidRequest, match="timeout"):
        await services.accounts.register(new)
