"""A tenant against another's erased address after a master-key rotation: the keyed
hash of tenant A's erased suppression, matched under every key held since the
rotation, suppresses none of tenant B's sends to the same address, is neither lifted
nor re-keyed by B's requests, and cannot be named by B (docs/recipients.md,
"Erasure"; docs/operations.md, "Rotating the master key")."""

from __future__ import annotations

from pathlib import Path

import httpx
from sqlalchemy import select

from homing.clock import ManualClock
from homing.crypto import AddressRefs, generate_master_key
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.store.tables.inbound import suppressions
from tests.conftest import TenantClient, make_tenant
from tests.e2e.conftest import deliver, job, register, send
from tests.e2e.test_erasure_rotation import batch, keyed_settings, restarted

ADDRESS = "grace@example.org"


async def test_another_tenants_erased_hash_suppresses_nothing_of_mine_after_a_rotation(
    services: Services,
    tenant: TenantClient,
    api: httpx.AsyncClient,
    sandbox: SandboxServer,
    clock: ManualClock,
    database_url: str,
    tmp_path: Path,
    secret_key: str,
) -> None:
    other = await make_tenant(services, api, "globex")
    for client in (tenant, other):
        await register(client, sandbox, "resend", 1)
    body = {"address": ADDRESS, "channel": "email", "reason": "complaint"}
    assert (await tenant.post("/v1/suppressions", json=body)).status_code == 201
    assert (
        await tenant.post("/v1/erasure", json={"address": ADDRESS, "channel": "email"})
    ).is_success
    old_hash = AddressRefs.of(services.sealer).hashed(tenant.tenant_id, "email", ADDRESS)

    new_key = generate_master_key()
    rotated = keyed_settings(database_url, tmp_path, new_key, secret_key)
    async with restarted(rotated, clock, other) as (after, globex):
        # B names the hash of A's address as an address of its own: not an address.
        named = await globex.post("/v1/suppressions", json={**body, "address": old_hash})
        assert named.status_code == 422, named.text
        lifted = await globex.delete("/v1/suppressions", params={"address": ADDRESS})
        assert lifted.status_code == 404, lifted.text
        single = await send(globex, to=ADDRESS)
        [batched] = await batch(globex, ADDRESS)
        assert await deliver(after) == 2
        for job_id in (single, batched):
            assert (await job(globex, job_id))["status"] == "COMPLETED"
        # A's hash is still under the old key: B's sends neither matched nor moved it.
        async with after.db.transaction() as conn:
            kept = (
                await conn.execute(select(suppressions.c.tenant_id, suppressions.c.address))
            ).all()
        assert [tuple(row) for row in kept] == [(tenant.tenant_id, old_hash)]

    async with restarted(rotated, clock, tenant) as (after, acme):
        mine = await send(acme, to=ADDRESS)
        assert (await job(acme, mine))["status"] == "SUPPRESSED"
