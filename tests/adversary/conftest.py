"""Adversary tests: each tries one abuse a hostile tenant, test key, anonymous caller,
provider or receiver could attempt, black-box where the abuse is about processes.
docs/security.md names the test that proves each defence.

Also the hostile-input harness (once ``tests/hostile``): Homing's ASGI app on SQLite,
driven from sync tests. Schemathesis draws cases through Hypothesis, which runs
synchronous test functions, so the app and its services live on an event loop of their
own (an ``asyncio.Runner``) and every request is sent in-process through
``httpx.ASGITransport`` on that loop. Fuzzed bodies choose provider hosts and webhook
URLs, so the harness runs behind ``loopback_only``: nothing generated can reach past
127.0.0.0/8. Its fixtures (``harness``, ``pg_harness``, ``loopback_guard``) apply only
where a test asks for them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.api.app import create_app
from homing.crypto import generate_master_key
from homing.models import Plan
from homing.services import Services, build
from tests.fixtures import settings_for
from tests.netguard import loopback_only

ADMIN_TOKEN = "admin-token-hostile-0123456789"
BASE_URL = "http://homing.test"
MAX_BODY_BYTES = 65_536
INBOUND_MAX_BODY_BYTES = 8_192


# What the hand-written tests and the fuzzing harness share: admin API and billing on.
HOSTILE_SETTINGS: dict[str, Any] = {
    "admin_token": ADMIN_TOKEN,
    "paystack_secret_key": "sk_test_hostile_paystack_0123",
    "polar_webhook_secret": "polar_whs_hostile_0123456789",
    "provider_timeout_seconds": 1,
    "webhook_allowed_networks": "127.0.0.0/8",
}


@dataclass
class Harness:
    runner: asyncio.Runner
    services: Services
    client: httpx.AsyncClient
    tenant_id: str
    key: str

    @property
    def app(self) -> Any:
        transport = self.client._transport
        assert isinstance(transport, httpx.ASGITransport)
        return transport.app

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return self.runner.run(self.client.request(method, url, **kwargs))

    def run(self, coroutine: Any) -> Any:
        return self.runner.run(coroutine)


@contextlib.contextmanager
def _harness(database_url: str, tmp: Path) -> Iterator[Harness]:
    settings = settings_for(database_url, tmp, generate_master_key(), **HOSTILE_SETTINGS)
    with pytest.MonkeyPatch.context() as patch, asyncio.Runner() as runner:
        loopback_only(patch)
        services = runner.run(build(settings))
        tenant, key = runner.run(
            services.tenants.create("hostile", Plan.STARTUP, rate_limit_per_minute=1_000_000)
        )
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(services)), base_url=BASE_URL, timeout=30
        )
        try:
            yield Harness(runner, services, client, tenant.id, key)
        finally:
            runner.run(client.aclose())
            runner.run(services.aclose())


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    """The app on SQLite (fast: the normal suite fuzzes this one)."""
    tmp = tmp_path_factory.mktemp("hostile")
    with _harness(f"sqlite+aiosqlite:///{tmp / 'homing.db'}", tmp) as built:
        yield built


@pytest.fixture(scope="module")
def pg_harness(postgres_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    """The app on this test process's PostgreSQL database (the slow run fuzzes it too:
    PostgreSQL refuses values SQLite stores, such as NUL characters)."""
    with _harness(postgres_url, tmp_path_factory.mktemp("hostile-pg")) as built:
        yield built


@pytest.fixture
def loopback_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing the test sends can leave loopback (``tests.netguard``): the modules whose
    input chooses hosts opt in with ``pytest.mark.usefixtures("loopback_guard")``."""
    loopback_only(monkeypatch)
