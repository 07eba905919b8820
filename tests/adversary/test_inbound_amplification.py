"""A tenant cannot make Homing do unbounded work with its own signed inbound events.

A tenant holds the verification key of its own provider account, so it can sign any
body it likes: one SendGrid body of 20,000 tiny events, or a flood of small ones. Over
a real ``homing run`` on SQLite: the big body is refused 413 at once with nothing
journaled while ``/healthz`` keeps answering, and a flood past the account's events
per minute is refused 429 (whole bodies, with Retry-After) while another tenant's
account is served.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
from sqlalchemy import func, select

from homing.crypto import generate_master_key
from homing.models import Plan
from homing.services import Services, build
from homing.store.tables.inbound import inbound_events
from tests.fixtures import TEST_SETTINGS, homing_defaults, settings_for, sqlite_url
from tests.inbound.conftest import Vendor, add_account
from tests.processes import HomingProcess, eventually, free_port


@asynccontextmanager
async def _homing(tmp_path: Path, **env: str) -> AsyncIterator[tuple[httpx.AsyncClient, Services]]:
    """``homing run`` on a SQLite file, and Services on the same file for the setup."""
    secret_key = generate_master_key()
    settings = settings_for(
        sqlite_url(tmp_path / "data"), tmp_path, secret_key, **homing_defaults(*TEST_SETTINGS)
    )
    services = await build(settings)
    port = free_port()
    process_env = {
        "HOMING_DATABASE_URL": settings.resolved_database_url,
        "HOMING_DATA_DIR": str(settings.data_dir),
        "HOMING_SECRET_KEY": secret_key,
        **env,
    }
    server = HomingProcess(["run", "--port", str(port)], process_env, tmp_path / "run.log")
    server.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            await eventually(lambda: _healthy(client), what="homing run to listen")
            yield client, services
    finally:
        server.kill()
        await services.aclose()


async def _healthy(client: httpx.AsyncClient) -> bool:
    try:
        return (await client.get("/healthz", timeout=5)).status_code == 200
    except httpx.TransportError:
        return False


async def _sendgrid_account(client: httpx.AsyncClient, services: Services, name: str) -> Vendor:
    """A tenant with a SendGrid account whose verification key the tenant set itself."""
    tenant, api_key = await services.tenants.create(name, Plan.STARTUP)
    account = await add_account(services, tenant.id, "sendgrid")
    vendor = Vendor("sendgrid", account.id)
    response = await client.put(
        f"/v1/providers/{account.id}/inbound",
        json=vendor.secret(),
        headers={"Authorization": f"Bearer {api_key}"},
    )
    assert response.status_code == 200, response.text
    return vendor


def _batch(prefix: str, count: int) -> bytes:
    events = [{"event": "open", "sg_event_id": f"{prefix}{i}"} for i in range(count)]
    return json.dumps(events, separators=(",", ":")).encode()


async def _journaled(services: Services) -> int:
    async with services.db.transaction() as conn:
        query = select(func.count()).select_from(inbound_events)
        return int((await conn.execute(query)).scalar_one())


async def test_a_signed_body_of_20000_events_is_refused_at_once(tmp_path: Path) -> None:
    async with _homing(tmp_path) as (client, services):
        vendor = await _sendgrid_account(client, services, "amplifier")
        body = _batch("e", 20_000)
        assert len(body) < 1_048_576, "within the body cap: only the event count is at fault"

        async def health_while_posting() -> list[float]:
            answered = []
            while not posted.done():
                started = time.monotonic()
                response = await client.get("/healthz", timeout=5)
                assert response.status_code == 200
                answered.append(time.monotonic() - started)
                await asyncio.sleep(0.05)
            return answered

        started = time.monotonic()
        posted = asyncio.ensure_future(
            client.post(vendor.path, content=body, headers=vendor.sign(body), timeout=20)
        )
        latencies = await health_while_posting()
        response = await posted
        assert response.status_code == 413, response.text
        assert response.json()["error"]["code"] == "payload_too_large"
        assert time.monotonic() - started < 10, "refused only after doing the work"
        assert max(latencies, default=0) < 3, "the event loop froze"
        assert await _journaled(services) == 0, "events of a refused body were journaled"


async def test_a_flood_past_the_accounts_rate_is_429_and_spares_other_tenants(
    tmp_path: Path,
) -> None:
    async with _homing(tmp_path, HOMING_INBOUND_EVENTS_PER_MINUTE="30") as (client, services):
        flooder = await _sendgrid_account(client, services, "flooder")
        bystander = await _sendgrid_account(client, services, "bystander")
        statuses = []
        for n in range(8):
            body = _batch(f"f{n}-", 5)
            response = await client.post(flooder.path, content=body, headers=flooder.sign(body))
            statuses.append(response.status_code)
            if response.status_code == 429:
                assert int(response.headers["Retry-After"]) >= 1
                assert response.json()["error"]["code"] == "rate_limited"
        assert statuses == [200] * 6 + [429] * 2, statuses
        assert await _journaled(services) == 30, "a refused body was partly journaled"

        body = _batch("b-", 5)
        response = await client.post(bystander.path, content=body, headers=bystander.sign(body))
        assert response.status_code == 200, response.text
        assert response.json()["received"] == 5
