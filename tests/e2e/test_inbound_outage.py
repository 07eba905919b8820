"""Black box: a real ``homing api`` process is down while a vendor posts an event, for
longer than the five minutes Homing once allowed a signature; the sandbox retries as the
vendor does (the same signed body, on the vendor's schedule, on its own clock), and when
Homing is back the retry is taken and the event applied exactly once: a bounce
suppresses, a Vonage status folds into its SMS job."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, job, register, send
from tests.e2e.test_sms import TO, register_sms, send_sms
from tests.processes import HomingProcess, eventually, free_port, healthy, process_env

# The outage began this long ago on the sandbox's clock, which then catches up with now.
OUTAGE_SECONDS = 2 * 3600
# The sandbox's clock moves in these steps while Homing is down: 30 minutes in all.
DOWN_STEPS = [300] * 6


@dataclass
class Outage:
    """A port where ``homing api`` will listen, down until ``come_back``."""

    sb: Sandbox
    settings: Settings
    secret_key: str
    log_dir: Path
    port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def retry(self, advance: float) -> dict[str, Any]:
        response = await self.sb.http.post(
            "/_sandbox/events/retry", json={"advance_seconds": advance}
        )
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    async def post_while_down(self, provider: str, kind: str, to: str, url: str) -> None:
        """The vendor posts ``kind`` and retries it for half an hour, all refused."""
        clock = await self.sb.http.post("/_sandbox/clock", json={"offset_seconds": -OUTAGE_SECONDS})
        assert clock.status_code == 200, clock.text
        event = {"provider": provider, "type": kind, "message_to": to, "target_url": url}
        refused = await self.sb.http.post("/_sandbox/events", json=event)
        assert refused.status_code == 502, refused.text
        for step in DOWN_STEPS:
            assert all(p["status"] is None for p in (await self.retry(step))["posted"])
        [pending] = (await self.sb.http.get("/_sandbox/events/retry")).json()
        assert pending["attempts"] > 1, "the vendor retried during the outage"

    async def come_back(self) -> None:
        """Homing starts; the sandbox's clock catches up with now and the retry due
        meanwhile is taken; the vendor then stops."""
        env = process_env(self.settings, self.secret_key)
        args = ["api", "--port", str(self.port)]
        homing = HomingProcess(args, env, self.log_dir / "api.log").start()
        try:
            async with httpx.AsyncClient(base_url=self.base, timeout=10) as client:
                await eventually(lambda: healthy(client), timeout=60, what="homing api to listen")
            caught_up = await self.sb.http.post("/_sandbox/clock", json={"offset_seconds": 0})
            assert caught_up.is_success
            posted = (await self.retry(0))["posted"]
            assert [p["status"] for p in posted] == [200], (posted, homing.output())
            assert (await self.retry(30 * 3600))["posted"] == [], "a vendor stops at a 2xx"
        finally:
            assert homing.stop() == 0, homing.output()
        attempts = [p["status"] for p in (await self.sb.http.get("/_sandbox/events")).json()]
        assert attempts[-1] == 200 and set(attempts[:-1]) == {None}


@pytest.fixture
def outage(sb: Sandbox, settings: Settings, secret_key: str, tmp_path: Path) -> Outage:
    return Outage(sb, settings, secret_key, tmp_path, free_port())


async def _inbound_url(
    tenant: TenantClient, sb: Sandbox, account: dict[str, Any], provider: str, base: str
) -> str:
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
    outage: Outage,
    provider: str,
) -> None:
    account = await register(tenant, sandbox, provider, 1)
    url = await _inbound_url(tenant, sb, account, provider, outage.base)
    first = await send(tenant)
    assert await deliver(services) == 1
    await outage.post_while_down(provider, "bounce", "ada@example.com", url)
    await outage.come_back()
    body = await job(tenant, first)
    assert body["delivery_status"] == "bounced"
    assert [e["type"] for e in body["events"]] == ["bounced"], "applied exactly once"
    second = await send(tenant)
    assert await deliver(services) == 0
    assert (await job(tenant, second))["status"] == "SUPPRESSED"


async def test_a_vonage_status_posted_through_an_outage_is_applied_once_when_homing_returns(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    outage: Outage,
) -> None:
    account = await register_sms(tenant, sandbox, "vonage", 1)
    url = await _inbound_url(tenant, sb, account, "vonage", outage.base)
    job_id = await send_sms(tenant)
    assert await deliver(services) == 1
    await outage.post_while_down("vonage", "delivered", TO, url)
    await outage.come_back()
    body = await job(tenant, job_id)
    assert body["delivery_status"] == "delivered"
    assert [e["type"] for e in body["events"]] == ["delivered"], "applied exactly once"
