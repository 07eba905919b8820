"""Real receivers verify genuine deliveries from a Homing worker, unchanged: a Node.js
receiver written to the design's rule (``X-Webhook-*``, milliseconds, one hex
signature), one written to NotifyKit's SDK rule (seconds, ``t=…,v1=…``), and the
``standardwebhooks`` library. Each refuses tampered, stale and replayed requests, and
each keeps verifying across a secret rotation as docs/webhooks.md says."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
from collections.abc import AsyncIterator
from typing import Protocol

import httpx
import pytest

from homing.clock import ManualClock
from homing.services import Services
from homing.webhooks import verify
from tests.conftest import TenantClient
from tests.webhooks.conftest import OVERLAP_SECONDS, create_secret, deliver, job, send_webhook
from tests.webhooks.receivers import Verdict
from tests.webhooks.receivers.node import node_receiver
from tests.webhooks.receivers.standard import standard_receiver

# The tenant's X-Webhook-* format each receiver is written for; the standardwebhooks
# library reads the webhook-* headers, which are the same in both formats.
KINDS = {"design": "design", "notifykit": "notifykit", "standard": "design"}
STALE_SECONDS = 5 * 60 + 60


class AnyReceiver(Protocol):
    @property
    def url(self) -> str: ...

    async def log(self) -> list[Verdict]: ...


@contextlib.asynccontextmanager
async def receiver_for(kind: str, secret: str) -> AsyncIterator[AnyReceiver]:
    if kind == "standard":
        async with standard_receiver(secret) as server:
            yield server
    else:
        async with node_receiver(kind, secret) as node:
            yield node


async def use_format(tenant: TenantClient, signature_format: str) -> None:
    body = {"webhook_signature_format": signature_format}
    response = await tenant.patch("/v1/settings", json=body)
    assert response.status_code == 200, response.text


async def delivered(
    services: Services, tenant: TenantClient, receiver: AnyReceiver
) -> tuple[str, Verdict]:
    """Send one webhook through the API and a worker; what the receiver answered."""
    job_id = await send_webhook(tenant, f"{receiver.url}/hook")
    assert await deliver(services) == 1
    return job_id, (await receiver.log())[-1]


async def resend(
    receiver: AnyReceiver,
    verdict: Verdict,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> int:
    """POST a captured delivery again (an attacker's replay), maybe altered."""
    kept = {
        k: v
        for k, v in verdict.headers.items()
        if k.startswith(("webhook-", "x-webhook-")) or k == "content-type"
    }
    async with httpx.AsyncClient(trust_env=False) as client:
        response = await client.post(
            f"{receiver.url}/hook",
            content=verdict.body if body is None else body,
            headers={**kept, **(headers or {})},
        )
    return response.status_code


@pytest.mark.parametrize("kind", list(KINDS))
async def test_each_receiver_accepts_a_genuine_delivery(
    services: Services, tenant: TenantClient, kind: str
) -> None:
    secret = await create_secret(tenant)
    await use_format(tenant, KINDS[kind])
    async with receiver_for(kind, secret) as receiver:
        job_id, verdict = await delivered(services, tenant, receiver)
    assert verdict.status == 204, verdict
    assert (await job(tenant, job_id))["status"] == "COMPLETED"
    assert verify(secret, verdict.headers, verdict.body) == {"event": "order.paid", "id": 42}


@pytest.mark.parametrize("kind", list(KINDS))
async def test_each_receiver_refuses_a_tampered_delivery(
    services: Services, tenant: TenantClient, kind: str
) -> None:
    secret = await create_secret(tenant)
    await use_format(tenant, KINDS[kind])
    async with receiver_for(kind, secret) as receiver:
        _, genuine = await delivered(services, tenant, receiver)
        assert genuine.accepted
        forged = genuine.body.replace(b"42", b"43")
        assert await resend(receiver, genuine, body=forged) == 401


@pytest.mark.parametrize("kind", list(KINDS))
async def test_each_receiver_refuses_a_replayed_delivery(
    services: Services, tenant: TenantClient, kind: str
) -> None:
    secret = await create_secret(tenant)
    await use_format(tenant, KINDS[kind])
    async with receiver_for(kind, secret) as receiver:
        _, genuine = await delivered(services, tenant, receiver)
        assert genuine.accepted
        assert await resend(receiver, genuine) == 409


@pytest.mark.parametrize("kind", list(KINDS))
async def test_each_receiver_refuses_a_stale_delivery(
    services: Services, tenant: TenantClient, clock: ManualClock, kind: str
) -> None:
    secret = await create_secret(tenant)
    await use_format(tenant, KINDS[kind])
    # Homing's injected clock runs six minutes behind the receivers' real one: the
    # delivery is signed genuinely, but with a timestamp older than five minutes.
    clock.advance(-STALE_SECONDS)
    async with receiver_for(kind, secret) as receiver:
        job_id, verdict = await delivered(services, tenant, receiver)
    assert verdict.status == 401, verdict
    assert (await job(tenant, job_id))["status"] == "FAILED"


async def test_a_design_receiver_refuses_the_former_seconds_form(
    services: Services, tenant: TenantClient
) -> None:
    secret = await create_secret(tenant)
    async with receiver_for("design", secret) as receiver:
        _, genuine = await delivered(services, tenant, receiver)
        seconds = genuine.headers["webhook-timestamp"]
        signature = hmac.new(
            secret.encode(), f"{seconds}.".encode() + genuine.body, hashlib.sha256
        ).hexdigest()
        former = {"x-webhook-timestamp": seconds, "x-webhook-signature": signature}
        assert await resend(receiver, genuine, headers=former) == 401


async def _verdicts(
    services: Services, tenant: TenantClient, receivers: dict[str, AnyReceiver]
) -> dict[str, int]:
    answers = {}
    for name, receiver in receivers.items():
        _, verdict = await delivered(services, tenant, receiver)
        answers[name] = verdict.status
    return answers


@pytest.mark.parametrize("kind", ["design", "notifykit"])
async def test_receivers_keep_verifying_across_a_rotation_overlap(
    services: Services, tenant: TenantClient, clock: ManualClock, kind: str
) -> None:
    # Start two minutes back, so that after the overlap Homing's clock is still
    # behind the receivers' (NotifyKit's rule refuses timestamps from the future).
    clock.advance(-120)
    old = await create_secret(tenant)
    await use_format(tenant, kind)
    new = (await tenant.post("/v1/webhook-secret/rotate")).json()["secret"]
    async with contextlib.AsyncExitStack() as stack:
        receivers = {
            f"{k}-{which}": await stack.enter_async_context(receiver_for(k, secret))
            for k in (kind, "standard")
            for which, secret in (("old", old), ("new", new))
        }
        during = await _verdicts(services, tenant, receivers)
        clock.advance(OVERLAP_SECONDS + 1)
        after = await _verdicts(services, tenant, receivers)
    # During the overlap X-Webhook-Signature is the previous secret's, and
    # webhook-signature carries both; afterwards only the new secret signs.
    assert during == {
        f"{kind}-old": 204,
        f"{kind}-new": 401,
        "standard-old": 204,
        "standard-new": 204,
    }
    assert after == {
        f"{kind}-old": 401,
        f"{kind}-new": 204,
        "standard-old": 401,
        "standard-new": 204,
    }
