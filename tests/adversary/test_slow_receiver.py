"""A receiver that trickles its answer cannot hold a worker slot or get a job sent twice.

Real processes over real HTTP: one ``homing run`` with a 2 s lease, 4 worker slots and
2 per tenant. Tenant A posts 4 webhooks to a loopback receiver that answers one byte
a second for ever; tenant B sends one email through the sandbox. B's email must be
delivered within seconds, each of A's calls must be cut at the call deadline, and
no job may be sent again while an earlier call of it is still open (a lease that
ran out under a live call would let a second worker send the same job). An
``at_most_once`` email to a provider that trickles is sent exactly once.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from homing.sandbox.server import SandboxServer
from tests.adversary.deadline_helpers import SlowReceiver, create_tenant, homing_run
from tests.processes import eventually

LEASE_SECONDS = 2.0
DEADLINE_SECONDS = 4.0
# The trickle never ends by itself: a call closes only when Homing cuts it.
CUT_SLACK_SECONDS = 6.0


def _env(receiver: SlowReceiver, sandbox: SandboxServer) -> dict[str, str]:
    return {
        "HOMING_LEASE_SECONDS": str(LEASE_SECONDS),
        "HOMING_PROVIDER_DEADLINE_SECONDS": str(DEADLINE_SECONDS),
        "HOMING_WORKER_CONCURRENCY": "4",
        "HOMING_TENANT_INFLIGHT": "2",
        "HOMING_RETRY_BASE_SECONDS": "1",
        "HOMING_RETRY_MAX_SECONDS": "2",
        "HOMING_WEBHOOK_REQUIRE_HTTPS": "false",
        "HOMING_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
        # The provider endpoint guard lets the sandbox through by either of these.
        "HOMING_PROVIDER_ALLOWED_NETWORKS": "127.0.0.0/8",
        "HOMING_SANDBOX_URLS": sandbox.base_url,
    }


async def _register_sandbox_resend(
    api: httpx.AsyncClient, tenant: dict[str, str], sandbox: SandboxServer
) -> None:
    response = await api.post(
        "/v1/providers",
        json={
            "channel": "email",
            "provider": "resend",
            "credentials": {"api_key": "re_demo_123456"},
            "config": {"base_url": sandbox.provider_base_url("resend")},
        },
        headers=tenant,
    )
    assert response.status_code == 201, response.text


async def _post_webhooks(
    api: httpx.AsyncClient, tenant: dict[str, str], url: str, count: int
) -> list[str]:
    ids = []
    for n in range(count):
        response = await api.post(
            "/v1/notifications/webhook",
            json={"url": url, "payload": {"n": n}},
            headers=tenant,
        )
        assert response.status_code == 202, response.text
        ids.append(response.json()["id"])
    return ids


async def _send_email(api: httpx.AsyncClient, tenant: dict[str, str]) -> str:
    response = await api.post(
        "/v1/notifications/email",
        json={"to": "bob@example.com", "from": "b@b.example", "subject": "s", "text": "t"},
        headers=tenant,
    )
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


def _no_job_open_twice(receiver: SlowReceiver) -> None:
    doubled = {job: n for job, n in receiver.most_open.items() if n > 1}
    assert not doubled, f"jobs sent again while an earlier call was open: {doubled}"


async def test_a_trickling_receiver_holds_no_slot_and_gets_no_job_twice(tmp_path: Path) -> None:
    async with (
        SandboxServer(port=0, smtp_port=None) as sandbox,
        SlowReceiver() as receiver,
        homing_run(tmp_path, _env(receiver, sandbox)) as api,
    ):
        tenant_a = await create_tenant(api, "trickle")
        tenant_b = await create_tenant(api, "bystander")
        await _register_sandbox_resend(api, tenant_b, sandbox)
        hooks = await _post_webhooks(api, tenant_a, receiver.url, 4)

        async def two_open() -> bool:
            return sum(receiver.open_now.values()) >= 2

        await eventually(two_open, timeout=15, what="A's first webhooks to reach the receiver")
        first_open = time.monotonic()

        async def lease_ran_out() -> bool:
            _no_job_open_twice(receiver)
            return time.monotonic() - first_open > LEASE_SECONDS + 1

        # Past the lease: an unrenewed claim is now free for another worker to take.
        await eventually(lease_ran_out, timeout=10, what="the lease to pass")
        email = await _send_email(api, tenant_b)
        sent = time.monotonic()

        async def delivered() -> bool:
            _no_job_open_twice(receiver)
            response = await api.get(f"/v1/jobs/{email}", headers=tenant_b)
            return response.json()["status"] == "COMPLETED"

        await eventually(delivered, timeout=15, what="B's email to be delivered")
        assert time.monotonic() - sent < 15

        async def every_hook_cut() -> bool:
            _no_job_open_twice(receiver)
            return receiver.closed_jobs() >= set(hooks)

        await eventually(every_hook_cut, timeout=30, what="each of A's calls to be cut")
        _no_job_open_twice(receiver)
        for call in receiver.calls:
            if call.closed is not None:
                assert call.closed - call.opened < DEADLINE_SECONDS + CUT_SLACK_SECONDS


async def test_an_at_most_once_email_to_a_trickling_provider_is_sent_once(
    tmp_path: Path,
) -> None:
    async with (
        SandboxServer(port=0, smtp_port=None) as sandbox,
        SlowReceiver() as provider,
        homing_run(tmp_path, _env(provider, sandbox)) as api,
    ):
        tenant = await create_tenant(api, "careful")
        # SendGrid (no idempotency keys) at an address that trickles every send.
        response = await api.post(
            "/v1/providers",
            json={
                "channel": "email",
                "provider": "sendgrid",
                "credentials": {"api_key": "SG.trickle"},
                "config": {"base_url": f"http://127.0.0.1:{provider.port}"},
            },
            headers=tenant,
        )
        assert response.status_code == 201, response.text
        response = await api.post(
            "/v1/notifications/email",
            json={
                "to": "ada@example.com",
                "from": "a@a.example",
                "subject": "once",
                "text": "t",
                "delivery": "at_most_once",
            },
            headers=tenant,
        )
        assert response.status_code == 202, response.text
        email = response.json()["id"]

        async def given_up() -> dict[str, Any] | None:
            _no_job_open_twice(provider)
            body: dict[str, Any] = (await api.get(f"/v1/jobs/{email}", headers=tenant)).json()
            return body if body["status"] == "FAILED" else None

        job = await eventually(given_up, timeout=DEADLINE_SECONDS + 15, what="the job to end")
        assert job["error_class"] == "uncertain"
        # Sent once, cut at the deadline, never sent again: not by a retry, not by a
        # second worker after the lease.
        assert len(provider.calls) == 1
        call = provider.calls[0]

        async def cut() -> bool:
            return call.closed is not None

        await eventually(cut, timeout=5, what="the call to be closed")
        assert call.closed is not None
        assert call.closed - call.opened < DEADLINE_SECONDS + CUT_SLACK_SECONDS
        assert len(provider.calls) == 1
