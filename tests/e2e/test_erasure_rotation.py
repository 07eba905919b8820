"""An erased address stays suppressed across a master-key rotation (issue #26), on
SQLite and PostgreSQL, with real sends through the sandbox over HTTP: the key is
rotated as an operator does it (a new ``HOMING_SECRET_KEY``, the old one in
``HOMING_PREVIOUS_SECRET_KEYS``, services restarted, ``homing keys rotate``), and the
hashes kept under the old key still suppress single and batch sends, at accept and at
claim; each is moved to the new key as its address is seen, so it outlives the old
key's removal (docs/operations.md, "Rotating the master key")."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from homing.api.app import create_app
from homing.cli import main
from homing.clock import ManualClock
from homing.crypto import AddressRefs, generate_master_key
from homing.sandbox.server import SandboxServer
from homing.services import Services, build
from homing.settings import Settings
from homing.store.tables.inbound import suppressions
from homing.store.tables.recipients import address_opt_outs
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, job, register, send
from tests.fixtures import settings_for

ADDRESS = "grace@example.org"
OPTED = "lin@example.org"


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    return keyed_settings(database_url, tmp_path, secret_key)


def keyed_settings(
    database_url: str, tmp_path: Path, key: str, previous: str | None = None
) -> Settings:
    """The test settings under master key ``key``, with ``previous`` keys if any."""
    return settings_for(
        database_url,
        tmp_path,
        key,
        previous_secret_keys=previous,
        provider_timeout_seconds=1,
        public_url="http://homing.test",
    )


@asynccontextmanager
async def restarted(
    settings: Settings, clock: ManualClock, tenant: TenantClient
) -> AsyncIterator[tuple[Services, TenantClient]]:
    """Services built again on the same database under ``settings`` (a restart), and
    the tenant's client on their API."""
    services = await build(settings, clock=clock, run_migrations=False)
    try:
        transport = httpx.ASGITransport(app=create_app(services))
        async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as api:
            yield services, TenantClient(api, tenant.tenant_id, tenant.key)
    finally:
        await services.aclose()


async def rotate(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    settings: Settings,
    new: str,
    old: str,
) -> dict[str, Any]:
    """``homing keys rotate --json`` with the operator's settings; its report."""
    monkeypatch.delenv("HOMING_REDIS_URL", raising=False)
    monkeypatch.setenv("HOMING_DATABASE_URL", str(settings.database.url))
    monkeypatch.setenv("HOMING_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("HOMING_SECRET_KEY", new)
    monkeypatch.setenv("HOMING_PREVIOUS_SECRET_KEYS", old)
    monkeypatch.setenv("HOMING_LOG_LEVEL", "error")
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["keys", "rotate", "--json"]) == 0
    out = capsys.readouterr()
    assert "HOMING_PREVIOUS_SECRET_KEYS" in out.err  # the warning about keyed hashes
    report: dict[str, Any] = json.loads(out.out)
    return report


async def batch(tenant: TenantClient, *addresses: str) -> list[str]:
    common = {"from": "Acme <hello@acme.example>", "subject": "Hi", "text": "Hello"}
    messages = [{**common, "to": to} for to in addresses]
    response = await tenant.post("/v1/notifications/email/batch", json={"messages": messages})
    assert response.status_code == 202, response.text
    return [str(r["id"]) for r in response.json()["results"]]


async def erase_both(tenant: TenantClient) -> str:
    """Suppress ADDRESS and opt OPTED out of ``digest`` by a recipient's preference,
    then erase both (ADDRESS with a job still queued to it, which is returned)."""
    category = {"name": "Digest", "kind": "transactional"}
    assert (await tenant.put("/v1/categories/digest", json=category)).status_code == 201
    assert (await tenant.put("/v1/recipients/user-1", json={"email": OPTED})).status_code == 201
    patch = {"categories": {"digest": {"email": False}}}
    assert (await tenant.patch("/v1/recipients/user-1/preferences", json=patch)).status_code == 200
    queued = await send(tenant, to=ADDRESS)
    body = {"address": ADDRESS, "channel": "email", "reason": "complaint"}
    assert (await tenant.post("/v1/suppressions", json=body)).status_code == 201
    erased = await tenant.post("/v1/erasure", json={"address": ADDRESS, "channel": "email"})
    assert erased.json()["kept_as_hash"]["suppressions"] == 1, erased.text
    gone = await tenant.delete("/v1/recipients/user-1")
    assert gone.status_code == 200 and gone.json()["kept_as_hash"]["opt_outs"] == 1, gone.text
    return queued


async def stored_hashes(services: Services) -> set[str]:
    async with services.db.transaction() as conn:
        erased = set((await conn.scalars(select(suppressions.c.address))).all())
        opted = set((await conn.scalars(select(address_opt_outs.c.address_ref))).all())
    return erased | opted


def hashes_under(services: Services, tenant_id: str) -> set[str]:
    refs = AddressRefs.of(services.sealer)
    return {refs.hashed(tenant_id, "email", ADDRESS), refs.ref(tenant_id, "email", OPTED)}


async def test_an_erased_address_stays_suppressed_after_a_master_key_rotation(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
    database_url: str,
    tmp_path: Path,
    secret_key: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    await register(tenant, sandbox, "resend", 1)
    queued = await erase_both(tenant)
    before = hashes_under(services, tenant.tenant_id)
    assert await stored_hashes(services) == before

    new_key = generate_master_key()
    rotating = keyed_settings(database_url, tmp_path, new_key, secret_key)
    report = await rotate(monkeypatch, capsys, rotating, new_key, secret_key)
    assert report["keyed_hashes"] == 2 and report["resealed"] == 1  # the provider's key

    async with restarted(rotating, clock, tenant) as (after, client):
        # At claim: the job queued before the erasure ends unsent.
        await deliver(after)
        assert (await job(client, queued))["status"] == "SUPPRESSED"
        # At accept, alone and in a batch, and by the opt-out of its category.
        single = await send(client, to=f"Grace <{ADDRESS.upper()}>")
        assert (await job(client, single))["status"] == "SUPPRESSED"
        [batched, other] = await batch(client, ADDRESS, "kept@example.org")
        assert (await job(client, batched))["status"] == "SUPPRESSED"
        opted = await send(client, to=OPTED, category="digest")
        assert (await job(client, opted))["error_class"] == "preference"
        assert await deliver(after) == 1
        assert (await job(client, other))["status"] == "COMPLETED"
        # Seen again, each hash moved to the new key in the transaction that matched it.
        assert await stored_hashes(after) == hashes_under(after, tenant.tenant_id)
        assert not before & hashes_under(after, tenant.tenant_id)

    sent = json.dumps(await sb.messages()).lower()
    assert "kept@example.org" in sent and ADDRESS not in sent and OPTED not in sent

    # The old key dropped (step 3): the moved hashes hold under the new key alone.
    only_new = keyed_settings(database_url, tmp_path, new_key)
    async with restarted(only_new, clock, tenant) as (last, client):
        again = await send(client, to=ADDRESS)
        assert (await job(client, again))["status"] == "SUPPRESSED"
        [in_batch] = await batch(client, ADDRESS)
        assert (await job(client, in_batch))["status"] == "SUPPRESSED"
        opted = await send(client, to=OPTED, category="digest")
        assert (await job(client, opted))["error_class"] == "preference"
        assert await deliver(last) == 0


async def test_a_hash_not_seen_before_its_key_is_dropped_no_longer_matches(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    clock: ManualClock,
    database_url: str,
    tmp_path: Path,
    secret_key: str,
) -> None:
    """The documented limit: a hash cannot be re-keyed without its address, so one
    whose address is not sent to while the old key is held is lost with the key."""
    await register(tenant, sandbox, "resend", 1)
    body = {"address": ADDRESS, "channel": "email", "reason": "complaint"}
    assert (await tenant.post("/v1/suppressions", json=body)).status_code == 201
    erased = await tenant.post("/v1/erasure", json={"address": ADDRESS, "channel": "email"})
    assert erased.status_code == 200, erased.text

    only_new = keyed_settings(database_url, tmp_path, generate_master_key())
    async with restarted(only_new, clock, tenant) as (_, client):
        assert (await job(client, await send(client, to=ADDRESS)))["status"] == "PENDING"


async def test_naming_an_address_erased_before_a_rotation_lifts_its_hash(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    clock: ManualClock,
    database_url: str,
    tmp_path: Path,
    secret_key: str,
) -> None:
    await register(tenant, sandbox, "resend", 1)
    body = {"address": ADDRESS, "channel": "email", "reason": "complaint"}
    assert (await tenant.post("/v1/suppressions", json=body)).status_code == 201
    erased = await tenant.post("/v1/erasure", json={"address": ADDRESS, "channel": "email"})
    assert erased.status_code == 200, erased.text

    rotated = keyed_settings(database_url, tmp_path, generate_master_key(), secret_key)
    async with restarted(rotated, clock, tenant) as (after, client):
        lifted = await client.delete("/v1/suppressions", params={"address": ADDRESS})
        assert lifted.status_code == 204, lifted.text
        assert await stored_hashes(after) == set()
        sent = await send(client, to=ADDRESS)
        assert await deliver(after) == 1
        assert (await job(client, sent))["status"] == "COMPLETED"
