"""Shared fixtures: databases (SQLite always, PostgreSQL for real), settings, services,
the API and its tenants, the sandbox, a webhook receiver and captured logs.

What they build comes from the factories in ``tests/fixtures.py``; a directory's
conftest overrides a fixture through those factories (``settings_for(..., field=...)``)
rather than copying a constructor.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shutil
import sqlite3
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from homing import tracing
from homing.api.app import create_app
from homing.channels import Channel
from homing.clock import ManualClock
from homing.crypto import generate_master_key
from homing.models import Plan, ProviderAccount, new_id
from homing.sandbox.server import SandboxServer
from homing.services import Services, build
from homing.settings import Settings
from homing.store.database import Database
from homing.store.migrate import migrate, schema_status
from homing.store.providers import seal_credentials
from tests.documented_errors import check_documented
from tests.fixtures import Sandbox, captured_logs, settings_for, sqlite_url
from tests.webhooks.receiver import Receiver

POSTGRES_URL = os.environ.get(
    "HOMING_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("HOMING_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")

TABLES = (
    "digest_items",
    "digests",
    "notification_steps",
    "notifications",
    "feed_items",
    "feed_origins",
    "feed_secrets",
    "layout_versions",
    "layouts",
    "template_versions",
    "templates",
    "audit_events",
    "notices",
    "alerts_firing",
    "alert_history",
    "console_flashes",
    "invitations",
    "console_sessions",
    "memberships",
    "users",
    "inbound_nonces",
    "inbound_conflicts",
    "inbound_events",
    "suppressions",
    "recipient_preferences",
    "address_opt_outs",
    "recipients",
    "recipient_counts",
    "categories",
    "sending_domains",
    "provider_inbound",
    "attempts",
    "dead_letters",
    "queue_entries",
    "jobs",
    "webhook_secrets",
    "webhook_gone_endpoints",
    "provider_accounts",
    "usage_counters",
    "api_keys",
    "tenant_settings",
    "tenants",
)


def _plain_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


async def _recreate_database(name: str) -> None:
    admin = await asyncpg.connect(_plain_dsn(POSTGRES_URL))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()


async def _drop_database(name: str) -> None:
    admin = await asyncpg.connect(_plain_dsn(POSTGRES_URL))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture(scope="session")
def postgres_url(worker_id: str) -> Iterator[str]:
    """A database of this test process's own, created fresh and dropped at the end.

    The name carries the process id, so concurrent test runs on one server never
    share (or drop) each other's database. PostgreSQL must be running: the suite
    fails (it does not skip) when it is not.
    """
    name = f"homing_test_{worker_id}_{os.getpid()}"
    asyncio.run(_recreate_database(name))
    base, _, _ = POSTGRES_URL.rpartition("/")
    url = f"{base}/{name}"
    # Migrated once here; each test then empties the tables (``_truncate``).
    asyncio.run(_migrated(url))
    yield url
    asyncio.run(_drop_database(name))


async def _migrated(url: str) -> None:
    db = Database(url)
    try:
        await migrate(db)
    finally:
        await db.dispose()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file this test process migrates once; each test's database is a copy.

    Checkpointed and closed before anyone copies it: in WAL mode a page may still be in
    ``-wal`` rather than in the file, and a copy without it would miss that page.
    """
    path = tmp_path_factory.mktemp("sqlite-template") / "homing.db"
    asyncio.run(_migrated(sqlite_url(path.parent)))
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = path.with_name(f"{path.name}-wal")
    assert not wal.exists() or wal.stat().st_size == 0, "template not checkpointed"
    return path


# Where SQL or a process is the subject, a test that takes a database runs on both
# SQLite and PostgreSQL; elsewhere (a schema, a middleware, a page, a hostile input) on
# SQLite alone, unless it is marked ``sql`` with its reason (a race, a lock, a search).
# The store's own suite holds each statement to both databases.
BOTH_DATABASES_DIRS = frozenset({"store", "e2e", "chaos", "outage", "feed", "deploy"})
DATABASES = ("sqlite", pytest.param("postgres", marks=pytest.mark.postgres))


def _directly_parametrized(metafunc: pytest.Metafunc, name: str) -> bool:
    for marker in metafunc.definition.iter_markers("parametrize"):
        names = marker.args[0]
        listed = names.split(",") if isinstance(names, str) else names
        if name in (n.strip() for n in listed):
            return True
    return False


def databases_for(path: Path, marked_sql: bool) -> tuple[Any, ...]:
    """The databases a test at ``path`` runs on (see ``BOTH_DATABASES_DIRS``)."""
    parts = path.relative_to(Path(__file__).parent).parts
    both = marked_sql or (len(parts) > 1 and parts[0] in BOTH_DATABASES_DIRS)
    return DATABASES if both else DATABASES[:1]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "database_url" not in metafunc.fixturenames:
        return
    if _directly_parametrized(metafunc, "database_url"):
        return  # the test names its database itself
    marked_sql = metafunc.definition.get_closest_marker("sql") is not None
    databases = databases_for(metafunc.definition.path, marked_sql)
    metafunc.parametrize("database_url", databases, indirect=True)


@pytest.fixture
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A migrated database: on SQLite a copy of the process's template file in the
    test's own directory, on PostgreSQL the process's database (emptied per test by
    ``services``). ``tests/store/test_migration_schema.py`` migrates from empty.
    Which of the two a test gets: ``pytest_generate_tests`` above."""
    if request.param == "sqlite":
        template: Path = request.getfixturevalue("sqlite_template")
        shutil.copyfile(template, tmp_path / template.name)
        return sqlite_url(tmp_path, template.name)
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def secret_key() -> str:
    return generate_master_key()


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(database_url, tmp_path, secret_key)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


async def _truncate(services: Services) -> None:
    # DELETE, children first, on both: on tables this small PostgreSQL's TRUNCATE costs
    # about a tenth of a second (a new file per table), DELETE a few milliseconds.
    async with services.db.transaction() as conn:
        for table in TABLES:
            await conn.execute(text(f"DELETE FROM {table}"))


@pytest.fixture
async def services(settings: Settings, clock: ManualClock) -> AsyncIterator[Services]:
    # ``database_url`` is migrated already (once per process): one read of the revision
    # instead of Alembic's no-op upgrade. A database a directory's settings point
    # elsewhere is still migrated here.
    built = await build(settings, clock=clock, run_migrations=False)
    if await schema_status(built.db) != "current":
        await migrate(built.db)
    await _truncate(built)
    try:
        yield built
    finally:
        await built.aclose()


@pytest.fixture
async def api(services: Services) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the app; every error it gets back must be one its route's OpenAPI
    entry lists (``tests.documented_errors``)."""
    transport = httpx.ASGITransport(app=create_app(services))
    hooks = {"response": [check_documented]}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://homing.test", event_hooks=hooks
    ) as client:
        yield client


class TenantClient:
    """An API client authenticated as one tenant."""

    def __init__(self, api: httpx.AsyncClient, tenant_id: str, key: str) -> None:
        self.api = api
        self.tenant_id = tenant_id
        self.key = key
        self.headers = {"Authorization": f"Bearer {key}"}

    async def get(self, path: str, **kw: Any) -> httpx.Response:
        return await self.api.get(path, headers={**self.headers, **kw.pop("headers", {})}, **kw)

    async def post(self, path: str, **kw: Any) -> httpx.Response:
        return await self.api.post(path, headers={**self.headers, **kw.pop("headers", {})}, **kw)

    async def put(self, path: str, **kw: Any) -> httpx.Response:
        return await self.api.put(path, headers={**self.headers, **kw.pop("headers", {})}, **kw)

    async def patch(self, path: str, **kw: Any) -> httpx.Response:
        return await self.api.patch(path, headers={**self.headers, **kw.pop("headers", {})}, **kw)

    async def delete(self, path: str, **kw: Any) -> httpx.Response:
        return await self.api.delete(path, headers={**self.headers, **kw.pop("headers", {})}, **kw)


async def make_tenant(
    services: Services,
    api: httpx.AsyncClient,
    name: str,
    plan: Plan = Plan.STARTUP,
    *,
    provider: bool = False,
    **limits: Any,
) -> TenantClient:
    """A new tenant (``limits``: its rate limit or quotas) and a client with its key;
    ``provider``: with an email and an SMS provider stored (``stored_provider``), so its
    sends are accepted (a send no provider could deliver is refused)."""
    tenant, key = await services.tenants.create(name, plan, **limits)
    if provider:
        await stored_provider(services, tenant.id)
        await stored_provider(services, tenant.id, Channel.SMS, "vonage", **{"from": "Acme"})
    return TenantClient(api, tenant.id, key)


async def advisory_locks_held(conn: AsyncConnection) -> int:
    """How many advisory locks the PostgreSQL transaction on ``conn`` holds now."""
    query = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
    return int((await conn.execute(text(query))).scalar_one())


async def stored_tenant(services: Services, name: str = "t", plan: Plan = Plan.STARTUP) -> str:
    """The id of a new tenant, for tests below the API that need no key."""
    tenant, _ = await services.tenants.create(name, plan)
    return tenant.id


async def stored_provider(
    services: Services,
    tenant_id: str,
    channel: Channel = Channel.EMAIL,
    provider: str = "resend",
    *,
    sealed: str | None = None,
    **config: Any,
) -> ProviderAccount:
    """An enabled provider stored for the tenant, its credentials never checked: for tests
    of accepting (a send no provider could deliver is refused at accept), not of
    delivery. Its endpoint is loopback's discard port: a job sent through it fails.
    ``sealed=""``: credentials that do not open, so a send through it fails for good at
    once (provider_permanent), with no connection tried."""
    account_id = new_id()
    if sealed is None:
        sealed = seal_credentials(services.sealer, account_id, {"api_key": "k"})
    return await services.providers.add(
        ProviderAccount(
            id=account_id,
            tenant_id=tenant_id,
            channel=channel,
            vendor=provider,
            priority=1,
            enabled=True,
            credentials_sealed=sealed,
            credentials_preview="k",
            config={"base_url": "http://127.0.0.1:9", **config},
            created_at=datetime.now(UTC),
        )
    )


async def disable_providers(services: Services, tenant_id: str) -> None:
    """Disable every provider of the tenant: the jobs it has queued then fail with
    ``no_provider`` (the way a send accepted before its provider went ends)."""
    for account in await services.providers.all(tenant_id):
        await services.providers.update(tenant_id, account.id, enabled=False)


async def job(tenant: TenantClient, job_id: str) -> dict[str, Any]:
    """The job as the tenant's API shows it (``GET /v1/jobs/{id}``, asserted 200)."""
    response = await tenant.get(f"/v1/jobs/{job_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def deliver(services: Services) -> int:
    """Drain the queue once with a worker of ``services``; how many jobs it handled."""
    return await services.worker().run(once=True)


@pytest.fixture
async def tenant(services: Services, api: httpx.AsyncClient) -> TenantClient:
    return await make_tenant(services, api, "acme")


@pytest.fixture
async def sandbox() -> AsyncIterator[SandboxServer]:
    """The sandbox on free loopback ports, HTTP and SMTP."""
    async with SandboxServer(port=0, smtp_port=0) as server:
        yield server


@pytest.fixture
async def sb(sandbox: SandboxServer) -> AsyncIterator[Sandbox]:
    async with httpx.AsyncClient(base_url=sandbox.base_url, timeout=10) as http:
        yield Sandbox(sandbox, http)


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    """A webhook receiver on a free loopback port that records what it is sent."""
    server = Receiver()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Tracing on for the test (homing.tracing), every span kept in memory."""
    exporter = InMemorySpanExporter()
    tracing.start(exporter)
    try:
        yield exporter
    finally:
        tracing.stop()


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    with captured_logs() as buffer:
        yield buffer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _no_proxy_env() -> Iterator[None]:
    # httpx honours proxy variables; tests only ever talk to loopback.
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.lower().endswith("_proxy")}
    yield
    os.environ.update(saved)
