"""Black box: a real ``homing api`` process is down while vendors post events, for
longer than the five minutes Homing once allowed a signature; the sandbox retries as
each vendor does (the same signed body, on the vendor's schedule, on its own clock, so
no real time passes), and when Homing is back each retry is taken and each event
applied exactly once: a bounce from Mailgun, SendGrid and Resend suppresses, a Vonage
status folds into its SMS job. The four vendors, each on a tenant of its own, go
through one outage together: one start of Homing per database, not one per vendor."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant
from tests.e2e.conftest import Sandbox, deliver, job, register, send
from tests.e2e.test_sms import TO, register_sms, send_sms
from tests.processes import HomingProcess, eventually, free_port, healthy, process_env

# The outage began this long ago on the sandbox's clock, which then catches up with now.
OUTAGE_SECONDS = 2 * 3600
# The sandbox's clock moves in these steps while Homing is down: 30 minutes in all.
DOWN_STEPS = [300] * 6


# One event per vendor: (provider, event type, the message's address).
EVENTS = [
    ("mailgun", "bounce", "ada@example.com"),
    ("sendgrid", "bounce", "ada@example.com"),
    ("resend", "bounce", "ada@example.com"),
    ("vonage", "delivered", TO),
]


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

    async def post_while_down(self, events: list[tuple[str, str, str, str]]) -> None:
        """The vendors post ``events`` ((provider, kind, to, url) each) and retry them
        for half an hour, all refused."""
        clock = await self.sb.http.post("/_sandbox/clock", json={"offset_seconds": -OUTAGE_SECONDS})
        assert clock.status_code == 200, clock.text
        for provider, kind, to, url in events:
            event = {"provider": provider, "type": kind, "message_to": to, "target_url": url}
            refused = await self.sb.http.post("/_sandbox/events", json=event)
            assert refused.status_code == 502, refused.text
        for step in DOWN_STEPS:
            posted = (await self.retry(step))["posted"]
            assert all(p["status"] is None for p in posted), posted
        pending = (await self.sb.http.get("/_sandbox/events/retry")).json()
        assert sorted(p["provider"] for p in pending) == sorted(e[0] for e in events)
        assert all(p["attempts"] > 1 for p in pending), "each vendor retried during the outage"

    async def come_back(self, providers: list[str]) -> None:
        """Homing starts; the sandbox's clock catches up with now and the retry of each
        of ``providers`` due meanwhile is taken; the vendors then stop."""
        env = process_env(self.settings, self.secret_key)
        args = ["api", "--port", str(self.port)]
        homing = HomingProcess(args, env, self.log_dir / "api.log").start()
        try:
            async with httpx.AsyncClient(base_url=self.base, timeout=10) as client:
                await eventually(lambda: healthy(client), timeout=60, what="homing api to listen")
            caught_up = await self.sb.http.post("/_sandbox/clock", json={"offset_seconds": 0})
            assert caught_up.is_success
            posted = (await self.retry(0))["posted"]
            assert sorted(p["provider"] for p in posted) == sorted(providers), posted
            assert [p["status"] for p in posted] == [200] * len(providers), (
                posted,
                homing.output(),
            )
            assert (await self.retry(30 * 3600))["posted"] == [], "a vendor stops at a 2xx"
        finally:
            assert homing.stop() == 0, homing.output()
        attempts = (await self.sb.http.get("/_sandbox/events")).json()
        for provider in providers:
            statuses = [p["status"] for p in attempts if p["provider"] == provider]
            assert statuses[-1] == 200 and set(statuses[:-1]) == {None}, (provider, statuses)


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
    path: str = response.json()["path"]
    return base + path


async def test_events_posted_through_an_outage_are_applied_once_when_homing_returns(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    outage: Outage,
) -> None:
    sent: dict[str, tuple[TenantClient, str]] = {}
    posts = []
    for provider, kind, to in EVENTS:
        client = await make_tenant(services, tenant.api, f"{provider}-tenant")
        if provider == "vonage":
            account = await register_sms(client, sandbox, provider, 1)
            job_id = await send_sms(client)
        else:
            account = await register(client, sandbox, provider, 1)
            job_id = await send(client)
        assert await deliver(services) == 1
        sent[provider] = (client, job_id)
        posts.append(
            (provider, kind, to, await _inbound_url(client, sb, account, provider, outage.base))
        )
    await outage.post_while_down(posts)
    await outage.come_back([provider for provider, _, _ in EVENTS])
    for provider, (client, job_id) in sent.items():
        body = await job(client, job_id)
        expected = "delivered" if provider == "vonage" else "bounced"
        assert body["delivery_status"] == expected, provider
        assert [e["type"] for e in body["events"]] == [expected], (
            f"{provider}: applied exactly once"
        )
        if provider != "vonage":
            second = await send(client)
            assert await deliver(services) == 0
            assert (await job(client, second))["status"] == "SUPPRESSED", provider
