"""Shared by the suspension and re-queueing adversary tests: a real ``homing run`` on a
SQLite file (and Services on the same file, for the setup and for reading what
changed), a tenant with something of every kind to change, its owner signed in to the
console over HTTP, and every row of the tenant's for "nothing changed"."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from homing.channels import Channel
from homing.crypto import generate_master_key
from homing.domain.domain_rows import SendingDomain
from homing.models import (
    Actor,
    ActorKind,
    DomainStatus,
    JobStatus,
    Plan,
    ProviderAccount,
    Role,
    new_id,
)
from homing.services import Services, build
from homing.store.domain_rows import DomainStore
from homing.store.providers import seal_credentials
from homing.store.tables.columns import metadata
from tests.conftest import stored_provider
from tests.console_helpers import PASSWORD, add_user
from tests.fixtures import TEST_SETTINGS, homing_defaults, settings_for, sqlite_url
from tests.processes import HomingProcess, eventually, free_port, healthy

ADMIN_TOKEN = "admin-token-for-suspension-tests-0123"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
_CSRF = re.compile(r'name="csrf" value="([0-9a-f]{64})"')
# Columns that move by themselves (a key's last use is noted as it authenticates).
_MOVING = frozenset({"last_used_at"})
_CLI = Actor(ActorKind.CLI, "homing")


@dataclass(frozen=True, slots=True)
class World:
    """A tenant with something of every kind: a FAILED job with its dead letter, two
    email providers (one with pacing rules), a suppression, a webhook secret, a
    domain, a template ``welcome`` and a layout ``brand`` each with a draft, a viewer,
    a pending invitation; its owner's email and its API key."""

    tenant_id: str
    key: str
    owner: str
    job_id: str
    providers: tuple[str, str]
    domain_id: str
    viewer_id: str
    invitation_id: str
    key_id: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


@asynccontextmanager
async def homing_run(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Services]]:
    """``homing run`` (API, console and workers in one process) on a SQLite file, and
    Services on the same file."""
    secret_key = generate_master_key()
    settings = settings_for(
        sqlite_url(tmp_path / "data"), tmp_path, secret_key, **homing_defaults(*TEST_SETTINGS)
    )
    services = await build(settings)
    port = free_port()
    env = {
        "HOMING_DATABASE_URL": settings.resolved_database_url,
        "HOMING_DATA_DIR": str(settings.data_dir),
        "HOMING_SECRET_KEY": secret_key,
        "HOMING_ADMIN_TOKEN": ADMIN_TOKEN,
        "HOMING_POLL_INTERVAL_SECONDS": "0.05",
        # Providers here point at a closed loopback port: nothing leaves the machine.
        "HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8",
        "HOMING_LOG_LEVEL": "warning",
    }
    server = HomingProcess(["run", "--port", str(port)], env, tmp_path / "run.log")
    server.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            await eventually(lambda: healthy(client), timeout=30, what="homing run to listen")
            yield client, services
    finally:
        server.stop()
        await services.aclose()


def nowhere() -> str:
    """A loopback URL no one listens on: a provider call there is refused at once."""
    return f"http://127.0.0.1:{free_port()}"


async def failed_job(
    client: httpx.AsyncClient, services: Services, tenant_id: str, auth: dict[str, str]
) -> str:
    """A job accepted over the API that fails at once, dead-lettered by the process's
    worker (``failed_send``)."""
    job_id: str = (await failed_send(client, services, tenant_id, auth)).json()["id"]
    return job_id


async def failed_send(
    client: httpx.AsyncClient, services: Services, tenant_id: str, auth: dict[str, str]
) -> httpx.Response:
    """The answer to a send accepted over the API whose job has failed when this
    returns: the provider stored for the accept has credentials that do not open
    (provider_permanent), and is disabled right after (no_provider), whichever the
    worker sees first; the tenant's other providers are then left as they were. The
    provider is there at the accept, which refuses a send with none (``no_provider``),
    whatever the process still remembers of the tenant's providers."""
    account = await stored_provider(services, tenant_id, sealed="")
    body = {"to": "ada@example.com", "from": "app@example.com", "subject": "Hi", "text": "Hi"}
    accepted = await client.post("/v1/notifications/email", json=body, headers=auth)
    assert accepted.status_code == 202, accepted.text
    await services.providers.update(tenant_id, account.id, enabled=False)
    await until_failed(services, tenant_id, accepted.json()["id"])
    return accepted


async def until_failed(services: Services, tenant_id: str, job_id: str) -> None:
    async def failed() -> bool:
        job, _ = await services.jobs.get(tenant_id, job_id)
        return job.status is JobStatus.FAILED

    await eventually(failed, what=f"job {job_id} to fail")


async def email_provider(services: Services, tenant_id: str, vendor: str, priority: int) -> str:
    """An email provider account stored directly (no credential check), pointing at a
    closed loopback port."""
    account_id = new_id()
    account = ProviderAccount(
        id=account_id,
        tenant_id=tenant_id,
        channel=Channel.EMAIL,
        vendor=vendor,
        priority=priority,
        enabled=True,
        credentials_sealed=seal_credentials(services.sealer, account_id, {"api_key": "k" * 24}),
        credentials_preview="api_key=…",
        config={"base_url": nowhere()},
        created_at=datetime.now(UTC),
    )
    return (await services.providers.add(account)).id


async def world(client: httpx.AsyncClient, services: Services, rate: int = 100) -> World:
    """A STARTUP tenant with something of every kind to change (``World``)."""
    tenant, key = await services.tenants.create("suspect", Plan.STARTUP, rate_limit_per_minute=rate)
    auth = {"Authorization": f"Bearer {key}"}
    job_id = await failed_job(client, services, tenant.id, auth)
    first = await email_provider(services, tenant.id, "sendgrid", 100)
    second = await email_provider(services, tenant.id, "resend", 200)
    rules = [{"scope": "account", "limit": 5, "per_seconds": 1}]
    await services.providers.update(tenant.id, first, config={"rate_rules": rules})
    for path, body in (
        ("/v1/suppressions", {"channel": "email", "address": "gone@example.com"}),
        ("/v1/webhook-secret", {}),
        ("/v1/templates", {"key": "welcome"}),
        ("/v1/templates/welcome/versions", {"sms": {"body": "hi"}}),  # draft number 1
        ("/v1/layouts", {"key": "brand"}),
        ("/v1/layouts/brand/versions", {"html": "<div>{{ content }}</div>"}),  # draft 1
    ):
        made = await client.post(path, json=body, headers=auth)
        assert made.status_code in (200, 201), made.text
    owner = "owner@suspect.test"
    await add_user(services, owner, tenant.id, Role.OWNER)
    viewer = await add_user(services, "viewer@suspect.test", tenant.id, Role.VIEWER)
    invited = await services.invitations.invite(
        tenant.id, tenant.name, "new@suspect.test", Role.VIEWER, _CLI, "http://homing.test"
    )
    return World(
        tenant_id=tenant.id,
        key=key,
        owner=owner,
        job_id=job_id,
        providers=(first, second),
        domain_id=await _domain(services, tenant.id, first),
        viewer_id=viewer.id,
        invitation_id=invited.invitation_id,
        key_id=(await services.keys.live(tenant.id))[0].id,
    )


async def _domain(services: Services, tenant_id: str, account_id: str) -> str:
    now = datetime.now(UTC)
    domain = SendingDomain(
        id=new_id(),
        tenant_id=tenant_id,
        provider_account_id=account_id,
        provider="sendgrid",
        domain="mail.suspect.test",
        provider_domain_id="d-1",
        status=DomainStatus.PENDING,
        records=[],
        created_at=now,
        updated_at=now,
        verified_at=None,
    )
    return (await DomainStore(services.db, most=services.settings.limits.domains).add(domain)).id


async def suspend(client: httpx.AsyncClient, tenant_id: str, suspended: bool = True) -> None:
    action = "suspend" if suspended else "unsuspend"
    done = await client.post(f"/admin/v1/tenants/{tenant_id}/{action}", headers=ADMIN)
    assert done.status_code == 200, done.text


async def console_sign_in(client: httpx.AsyncClient, email: str) -> str:
    """Sign ``client`` in to the console as ``email``; its session's CSRF token."""
    signed = await client.post("/sign-in", data={"email": email, "password": PASSWORD})
    assert signed.status_code == 303, signed.text
    page = await client.get("/", follow_redirects=True)
    assert page.status_code == 200, page.text
    found = _CSRF.search(page.text)
    assert found, "no CSRF token on the page"
    return found.group(1)


async def tenant_rows(services: Services, tenant_id: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table that holds the tenant's data (columns that move by
    themselves left out), sorted: equal before and after means nothing changed."""
    found: dict[str, list[tuple[Any, ...]]] = {}
    async with services.db.transaction() as conn:
        for table in metadata.sorted_tables:
            if "tenant_id" not in table.c:
                continue
            columns = [c for c in table.c if c.name not in _MOVING]
            query = select(*columns).where(table.c.tenant_id == tenant_id)
            rows = (await conn.execute(query)).all()
            found[table.name] = sorted((tuple(map(repr, row)) for row in rows), key=repr)
    return found
