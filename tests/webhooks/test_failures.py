"""How receivers' answers are handled: 2xx only, no redirects, transient vs
permanent, 429 + Retry-After, 410 Gone; and the SSRF guard at acceptance and at
delivery. No test connects anywhere but 127.0.0.1."""

from __future__ import annotations

import socket

import pytest

from homing.clock import ManualClock
from homing.services import Services, build_webhooks
from tests.conftest import TenantClient, make_tenant
from tests.webhooks.conftest import deliver, job, send_webhook
from tests.webhooks.receiver import Receiver, Reply
from tests.webhooks.test_delivery import trail
from tests.webhooks.test_transport import NoNetwork, StubResolver

A_DAY = 86_400


async def test_a_redirect_is_not_followed_and_fails_the_job(
    services: Services, tenant: TenantClient, receiver: Receiver, clock: ManualClock
) -> None:
    receiver.reply(Reply(302, {"Location": f"{receiver.url}/elsewhere"}))
    job_id = await send_webhook(tenant, f"{receiver.url}/hook")
    await deliver(services)
    clock.advance(A_DAY)
    assert await deliver(services) == 0
    assert [r.path for r in receiver.requests] == ["/hook"]
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "message_permanent"
    assert "redirect not followed" in body["error"]
    assert trail(body) == [(1, "webhook", "message_permanent", 302)]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 405, 422])
async def test_a_4xx_fails_at_once(
    services: Services, tenant: TenantClient, receiver: Receiver, clock: ManualClock, status: int
) -> None:
    receiver.reply(Reply(status, body=b'{"error":"nope"}'))
    job_id = await send_webhook(tenant, f"{receiver.url}/hook")
    await deliver(services)
    clock.advance(A_DAY)
    assert await deliver(services) == 0
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert trail(body) == [(1, "webhook", "message_permanent", status)]
    assert body["attempts"][0]["response_excerpt"] == '{"error":"nope"}'


@pytest.mark.parametrize("status", [408, 500, 502, 503, 504])
async def test_408_and_5xx_are_retried_until_dead_lettered(
    services: Services, tenant: TenantClient, receiver: Receiver, clock: ManualClock, status: int
) -> None:
    receiver.default = Reply(status)
    job_id = await send_webhook(tenant, f"{receiver.url}/hook")
    for _ in range(services.settings.retries.max_attempts):
        assert await deliver(services) == 1
        clock.advance(A_DAY)
    assert await deliver(services) == 0
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "transient"
    assert [a["number"] for a in body["attempts"]] == [1, 2, 3]
    assert len({r.headers["webhook-id"] for r in receiver.requests}) == 1


async def test_429_waits_for_retry_after_without_spending_an_attempt(
    services: Services, tenant: TenantClient, receiver: Receiver, clock: ManualClock
) -> None:
    receiver.reply(Reply(429, {"Retry-After": "120"}), Reply(429, {"Retry-After": "120"}))
    job_id = await send_webhook(tenant, f"{receiver.url}/hook")
    for _ in range(2):
        await deliver(services)
        clock.advance(119)
        assert await deliver(services) == 0
        clock.advance(1)
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "COMPLETED"
    assert trail(body) == [
        (1, "webhook", "throttled", 429),
        (1, "webhook", "throttled", 429),
        (1, "webhook", "success", 200),
    ]


async def test_a_refused_connection_is_transient(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    job_id = await send_webhook(tenant, f"http://127.0.0.1:{port}/hook")
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "PENDING"
    assert body["attempts"][0]["outcome"] == "transient"
    assert "connection failed" in body["attempts"][0]["error"]


async def test_a_timeout_is_transient(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    await services.webhooks.aclose()
    quick = services.settings.changed(webhook_timeout_seconds=0.2)
    services.webhooks = build_webhooks(quick, services.db, services.sealer, services.clock)
    receiver.reply(Reply(hang=True))
    job_id = await send_webhook(tenant, f"{receiver.url}/hook")
    await deliver(services)
    body = await job(tenant, job_id)
    assert body["status"] == "PENDING"
    assert body["attempts"][0]["outcome"] == "transient"
    assert "timed out" in body["attempts"][0]["error"]


async def test_the_response_excerpt_is_capped(
    services: Services, tenant: TenantClient, receiver: Receiver
) -> None:
    receiver.reply(Reply(500, body=b"\x00" + b"e" * 100_000))
    job_id = await send_webhook(tenant, f"{receiver.url}/hook")
    await deliver(services)
    [attempt] = (await job(tenant, job_id))["attempts"]
    cap = services.settings.webhooks.response_excerpt_bytes
    assert attempt["response_excerpt"] == "\ufffd" + "e" * (cap - 1)


async def test_410_marks_the_url_gone_until_the_tenant_re_enables_it(
    services: Services, tenant: TenantClient, receiver: Receiver, clock: ManualClock
) -> None:
    url = f"{receiver.url}/hook"
    receiver.reply(Reply(410, body=b"unsubscribed"))
    first = await send_webhook(tenant, url)
    await deliver(services)
    body = await job(tenant, first)
    assert body["status"] == "FAILED"
    assert trail(body) == [(1, "webhook", "message_permanent", 410)]
    [gone] = (await tenant.get("/v1/webhook-endpoints/gone")).json()["data"]
    assert gone["url"] == url
    assert gone["job_id"] == first

    second = await send_webhook(tenant, url)
    await deliver(services)
    assert len(receiver.requests) == 1  # failed fast: no request
    body = await job(tenant, second)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "message_permanent"
    assert "410 Gone before" in body["error"]

    other = await make_tenant(services, tenant.api, "globex")
    await send_webhook(other, url)
    await deliver(services)
    assert len(receiver.requests) == 2  # another tenant's jobs are not affected

    enabled = await tenant.post("/v1/webhook-endpoints/enable", json={"url": url})
    assert enabled.status_code == 204
    assert (await tenant.get("/v1/webhook-endpoints/gone")).json() == {
        "data": [],
        "next_cursor": None,
    }
    assert (await tenant.post(f"/v1/jobs/{second}/retry")).status_code == 202
    await deliver(services)
    assert (await job(tenant, second))["status"] == "COMPLETED"
    again = await tenant.post("/v1/webhook-endpoints/enable", json={"url": url})
    assert again.status_code == 404


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://169.254.169.254/latest/meta-data/", "cloud_metadata"),
        ("https://10.0.0.8/hook", "private"),
        ("https://[::ffff:10.0.0.8]/hook", "ipv4_mapped"),
        ("https://0xa9.0xfe.0xa9.0xfe/hook", "cloud_metadata"),
        ("https://2852039166/hook", "cloud_metadata"),
        ("http://93.184.216.34/hook", "https_required"),
        ("https://user:secret@hooks.example.com/hook", "credentials"),
        ("ftp://hooks.example.com/hook", "scheme"),
    ],
)
async def test_urls_refused_when_accepted(tenant: TenantClient, url: str, reason: str) -> None:
    response = await tenant.post("/v1/notifications/webhook", json={"url": url, "payload": {}})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "url_refused"
    assert error["details"] == {"reason": reason}


PRIVATE_DNS = {
    "internal.example.com": ["10.0.0.5"],
    "metadata.example.com": ["169.254.169.254"],
    "mixed.example.com": ["93.184.216.34", "10.0.0.1"],
    "public.example.com": ["93.184.216.34"],
}


@pytest.mark.parametrize(
    ("url", "refusal"),
    [
        ("https://internal.example.com/hook", "private"),
        ("https://metadata.example.com/hook", "cloud_metadata"),
        ("https://mixed.example.com/hook", "private"),
        # Plain http may reach the allowed networks only, wherever the name points.
        ("http://public.example.com/hook", "not_in_allowed_networks"),
    ],
)
async def test_a_host_name_resolving_to_a_refused_address_fails_without_a_connection(
    services: Services, tenant: TenantClient, clock: ManualClock, url: str, refusal: str
) -> None:
    network = NoNetwork()
    await services.webhooks.aclose()
    services.webhooks = build_webhooks(
        services.settings,
        services.db,
        services.sealer,
        services.clock,
        resolver=StubResolver(PRIVATE_DNS),
        socket_factory=network,
    )
    job_id = await send_webhook(tenant, url)
    await deliver(services)
    clock.advance(A_DAY)
    assert await deliver(services) == 0
    body = await job(tenant, job_id)
    assert body["status"] == "FAILED"
    assert body["error_class"] == "message_permanent"
    assert f"refused: the host resolves to a {refusal} address" in body["error"]
    assert "10.0.0" not in body["error"] and "169.254" not in body["error"]
    assert network.attempts == []
