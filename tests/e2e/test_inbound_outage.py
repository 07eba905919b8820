"""Black box: a real ``homing api`` process is down while a vendor posts a bounce, for
longer than the five minutes Homing once allowed a signature; the sandbox retries as the
vendor does (the same signed body, on the vendor's schedule, on its own clock), and when
Homing is back the retry is taken: the bounce suppresses, applied exactly once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, job, register, send
from tests.processes import HomingProcess, eventually, free_port, healthy, process_env

# The outage began this long ago on the sandbox's clock, which then catches up with now.
OUTAGE_SECONDS = 2 * 3600
# The sandbox's clock moves in these steps while Homing is down: 30 minutes in all.
DOWN_STEPS = [300] * 6


async def _retry(sb: Sandbox, advance: float) -> dict[str, Any]:
    response = await sb.http.post("/_sandbox/events/retry", json={"advance_seconds": advance})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def _inbound_url(
    tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, provider: str, base: str
) -> str:
    account = await register(tenant, sandbox, provider, 1)
    keys = (await sb.http.get("/_sandbox/keys")).json()
    response = await tenant.api.put(
        f"/v1/providers/{account['id']}/inbound", json=keys[provider], headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    return base + response.json()["path"]


@pytest.mark.parametrize("provider", ["mailgun", "sendgrid", "resend"])
async def test_a_bounce_posted_through_an_outage_is_applied_once_when_homing_returns(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    settings: Settings,
    secret_key: str,
    tmp_path: Path,
    provider: str,
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    url = await _inbound_url(tenant, sandbox, sb, provider, base)
    first = await send(tenant)
    assert await deliver(services) == 1

    # Homing is down (nothing listens on its port) when the vendor posts the bounce.
    clock = await sb.http.post("/_sandbox/clock", json={"offset_seconds": -OUTAGE_SECONDS})
    assert clock.status_code == 200, clock.text
    event = {"provider": provider, "type": "bounce", "message_to": "ada@example.com"}
    refused = await sb.http.post("/_sandbox/events", json={**event, "target_url": url})
    assert refused.status_code == 502, refused.text
    for step in DOWN_STEPS:
        assert all(p["status"] is None for p in (await _retry(sb, step))["posted"])
    [pending] = (await sb.http.get("/_sandbox/events/retry")).json()
    assert pending["attempts"] > 1, "the vendor retried during the outage"

    homing = HomingProcess(
        ["api", "--port", str(port)], process_env(settings, secret_key), tmp_path / "api.log"
    ).start()
    try:
        async with httpx.AsyncClient(base_url=base, timeout=10) as client:
            await eventually(lambda: healthy(client), timeout=60, what="homing api to listen")
        # The sandbox's clock catches up with now: the retry due meanwhile is posted.
        assert (await sb.http.post("/_sandbox/clock", json={"offset_seconds": 0})).is_success
        posted = (await _retry(sb, 0))["posted"]
        assert [p["status"] for p in posted] == [200], (posted, homing.output())
        assert (await _retry(sb, 30 * 3600))["posted"] == [], "a vendor stops at a 2xx"
    finally:
        assert homing.stop() == 0, homing.output()

    attempts = [p["status"] for p in (await sb.http.get("/_sandbox/events")).json()]
    assert attempts[-1] == 200 and set(attempts[:-1]) == {None}
    body = await job(tenant, first)
    assert body["delivery_status"] == "bounced"
    assert [e["type"] for e in body["events"]] == ["bounced"], "applied exactly once"
    second = await send(tenant)
    assert await deliver(services) == 0
    assert (await job(tenant, second))["status"] == "SUPPRESSED"
