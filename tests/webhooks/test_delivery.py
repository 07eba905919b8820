"""Webhooks end to end: API → queue → worker → a real receiver on 127.0.0.1, which
verifies every delivery with the ``standardwebhooks`` package and the design's
``X-Webhook-*`` rule."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
import standardwebhooks

from homing.channels import Channel
from homing.clock import ManualClock
from homing.domain.accepting import NewJob
from homing.models import Priority, Queue
from homing.services import Services
from homing.webhooks import verify
from homing.webhooks.message import write_message
from tests.conftest import TenantClient
from tests.webhooks.conftest import create_secret, deliver, job, send_webhook
from tests.webhooks.receiver import Received, Receiver, Reply

PAYLOAD = {"event": "order.paid", "id": 42}


def check_signed(request: Received, secret: str) -> None:
    """What any receiver would do: verify with a Standard Webhooks library, and the
    seed scheme with nothing but the standard library."""
    standardwebhooks.Webhook(secret).verify(request.body, request.headers)  # raises if not
    timestamp = request.headers["x-webhook-timestamp"]  # milliseconds (the design's rule)
    assert int(timestamp) // 1000 == int(request.headers["webhook-timestamp"])
    expected = hmac.new(
        secret.encode(), f"{timestamp}.".encode() + request.body, hashlib.sha256
    ).hexdigest()
    assert request.headers["x-webhook-signature"] == expected
    verify(secret, request.headers, request.body)


def trail(body: dict[str, object]) -> list[tuple[object, ...]]:
    attempts = body["attempts"]
    assert isinstance(attempts, list)
    return [(a["number"], a["provider"], a["outcome"], a["status_code"]) for a in attempts]


async def test_a_signed_webhook_is_delivered_and_verifies_with_standard_webhooks(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    secret = await create_secret(tenant)
    job_id = await send_webhook(
        tenant,
        f"{receiver.url}/hooks/orders",
        payload=PAYLOAD,
        event_type="order.paid",
        headers={"X-Customer": "c_123"},
    )
    assert await deliver(services) == 1
    [request] = receiver.requests
    check_signed(request, secret)
    assert request.method == "POST"
    assert request.path == "/hooks/orders"
    assert json.loads(request.body) == PAYLOAD
    assert request.headers["webhook-id"] == f"msg_{job_id}"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-webhook-event"] == "order.paid"
    assert request.headers["x-customer"] == "c_123"
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert body["channel"] == "webhook"
    assert body["provider"] == "webhook"
    assert trail(body) == [(1, "webhook", "success", 200)]
    assert body["attempts"][0]["response_excerpt"] == "ok"
    assert body["attempts"][0]["duration_ms"] >= 0


async def test_without_a_secret_the_delivery_is_unsigned(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    job_id = await send_webhook(tenant, f"{receiver.url}/hook")
    await deliver(services)
    [request] = receiver.requests
    assert request.headers["webhook-id"] == f"msg_{job_id}"
    assert "webhook-signature" not in request.headers
    assert "x-webhook-signature" not in request.headers
    assert (await job(tenant, job_id))["status"] == "COMPLETED"


async def test_retries_keep_the_webhook_id_and_each_attempt_is_freshly_signed(
    services: Services, tenant: TenantClient, receiver: Receiver, clock: ManualClock
) -> None:
    secret = await create_secret(tenant)
    receiver.reply(Reply(503, body=b"busy"), Reply(500, body=b"still busy"))
    job_id = await send_webhook(tenant, f"{receiver.url}/hook")
    for _ in range(3):
        await deliver(services)
        clock.advance(services.settings.retries.base_seconds * 2)
    first, second, third = receiver.requests
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == f"msg_{job_id}"
    assert third.headers["webhook-id"] == f"msg_{job_id}"
    assert first.headers["webhook-timestamp"] != third.headers["webhook-timestamp"]
    assert first.body == second.body == third.body
    for request in receiver.requests:
        check_signed(request, secret)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert trail(body) == [
        (1, "webhook", "transient", 503),
        (2, "webhook", "transient", 500),
        (3, "webhook", "success", 200),
    ]
    assert [a["response_excerpt"] for a in body["attempts"]] == ["busy", "still busy", "ok"]


@pytest.mark.parametrize(
    "name",
    [
        "webhook-signature",
        "Webhook-Signature",
        "WEBHOOK-ID",
        "webhook-timestamp",
        "X-Webhook-Signature",
        "x-webhook-timestamp",
        "Content-Type",
        "Host",
        "Bad Header",
    ],
)
async def test_the_api_refuses_tenant_headers_that_homing_sets(
    tenant: TenantClient, receiver: Receiver, name: str
) -> None:
    response = await tenant.post(
        "/v1/notifications/webhook",
        json={"url": f"{receiver.url}/hook", "payload": {}, "headers": {name: "forged"}},
    )
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "validation_error"


async def test_stored_tenant_headers_can_never_override_signature_or_id_headers(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    """Even a payload that bypassed the API's validation cannot forge them."""
    secret = await create_secret(tenant)
    forged = {
        "webhook-id": "msg_forged",
        "WEBHOOK-SIGNATURE": "v1,forged",
        "Webhook-Timestamp": "1",
        "x-webhook-signature": "forged",
        "X-WEBHOOK-TIMESTAMP": "1",
        "X-Kept": "yes",
    }
    url = f"{receiver.url}/hook"
    payload = write_message(services.sealer, tenant.tenant_id, url, b"{}", forged, None)
    accepted = await services.jobs.accept(
        NewJob(
            tenant_id=tenant.tenant_id,
            channel=Channel.WEBHOOK,
            queue=Queue.WEBHOOK,
            priority=Priority.NORMAL,
            payload=payload,
        )
    )
    await deliver(services)
    [request] = receiver.requests
    names = [name.lower() for name, _ in request.raw_headers]
    for name in ("webhook-id", "webhook-signature", "webhook-timestamp", "x-webhook-signature"):
        assert names.count(name) == 1
    assert request.headers["webhook-id"] == f"msg_{accepted.job.id}"
    assert "forged" not in request.headers["webhook-signature"]
    assert request.headers["x-kept"] == "yes"
    check_signed(request, secret)


async def test_an_idempotent_replay_sends_once(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    body = {"url": f"{receiver.url}/hook", "payload": PAYLOAD}
    headers = {"Idempotency-Key": "order-42-paid"}
    first = await tenant.post("/v1/notifications/webhook", json=body, headers=headers)
    again = await tenant.post("/v1/notifications/webhook", json=body, headers=headers)
    assert first.status_code == again.status_code == 202
    assert again.headers["Idempotent-Replayed"] == "true"
    assert first.json()["id"] == again.json()["id"]
    await deliver(services)
    assert len(receiver.requests) == 1


async def test_the_payload_is_sent_exactly_as_json_even_with_big_integers(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    payload = {"big": 2**70, "text": "café ✓", "list": [1.5, None, True]}
    await send_webhook(tenant, f"{receiver.url}/hook", payload=payload)
    await deliver(services)
    [request] = receiver.requests
    assert json.loads(request.body) == payload
    assert request.body == json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


async def test_a_payload_over_the_limit_is_413(tenant: TenantClient, receiver: Receiver) -> None:
    limit = 262_144
    response = await tenant.post(
        "/v1/notifications/webhook",
        json={"url": f"{receiver.url}/hook", "payload": {"blob": "x" * limit}},
    )
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "payload_too_large"
    assert error["details"]["limit"] == limit


async def test_an_invalid_payload_or_event_type_is_422(
    tenant: TenantClient, receiver: Receiver
) -> None:
    url = f"{receiver.url}/hook"
    missing = await tenant.post("/v1/notifications/webhook", json={"url": url})
    assert missing.status_code == 422
    bad_event = await tenant.post(
        "/v1/notifications/webhook",
        json={"url": url, "payload": {}, "event_type": "order\r\nX-Evil: 1"},
    )
    assert bad_event.status_code == 422
    bad_header = await tenant.post(
        "/v1/notifications/webhook",
        json={"url": url, "payload": {}, "headers": {"X-Name": "caf\u00e9"}},
    )
    assert bad_header.status_code == 422
    for raw in (b'{"n": NaN}', b'{"s": "\\ud800"}', b'{"n": Infinity}'):
        response = await tenant.post(
            "/v1/notifications/webhook",
            content=b'{"url": "' + url.encode() + b'", "payload": ' + raw + b"}",
            headers={"Content-Type": "application/json"},
        )
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "invalid_request"
