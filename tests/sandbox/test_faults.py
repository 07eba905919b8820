"""Fault injection over real HTTP: errors, latency, timeouts, accept-then-hang, scopes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import pytest

from homing.sandbox import FaultMode, FaultRule, FaultScope, SandboxServer
from homing.sandbox.state import FaultBook

SENDGRID_MAIL: dict[str, Any] = {
    "personalizations": [{"to": [{"email": "ada@example.com"}]}],
    "from": {"email": "hello@acme.example"},
    "subject": "Welcome",
    "content": [{"type": "text/plain", "value": "Hello Ada"}],
}
RESEND_MAIL: dict[str, Any] = {
    "from": "hello@acme.example",
    "to": "ada@example.com",
    "subject": "Welcome",
    "text": "Hello Ada",
}
SHORT = httpx.Timeout(5.0, read=0.3)


@pytest.fixture
async def client(sandbox: SandboxServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=sandbox.base_url, timeout=5) as http:
        yield http


async def add_fault(client: httpx.AsyncClient, **rule: Any) -> None:
    response = await client.post("/_sandbox/faults", json=rule)
    assert response.status_code == 201, response.text


async def sendgrid(client: httpx.AsyncClient, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": "Bearer SG.good"}
    return await client.post(
        "/sendgrid/v3/mail/send", json=SENDGRID_MAIL, headers=headers, **kwargs
    )


async def resend(client: httpx.AsyncClient, **headers: str) -> httpx.Response:
    headers = {"Authorization": "Bearer re_good", **headers}
    return await client.post("/resend/emails", json=RESEND_MAIL, headers=headers, timeout=SHORT)


async def postmark(client: httpx.AsyncClient) -> httpx.Response:
    mail = {"From": "hello@acme.example", "To": "ada@example.com", "TextBody": "Hi"}
    return await client.post("/postmark/email", json=mail, headers={"X-Postmark-Server-Token": "t"})


async def mailgun(client: httpx.AsyncClient) -> httpx.Response:
    form = {"from": "hello@acme.example", "to": "ada@example.com", "text": "Hi"}
    return await client.post("/mailgun/v3/mg.example.com/messages", data=form, auth=("api", "k"))


async def eventually(condition: Callable[[], Awaitable[bool]], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not await condition():
        assert time.monotonic() < deadline, "condition not met before the deadline"
        await asyncio.sleep(0.01)


async def test_counted_error_applies_to_next_sends_then_expires(client: httpx.AsyncClient) -> None:
    await add_fault(client, provider="sendgrid", status=503, count=2)
    first, second, third = [await sendgrid(client) for _ in range(3)]
    assert first.status_code == second.status_code == 503
    assert first.json()["errors"][0]["message"] == "service unavailable"
    assert third.status_code == 202
    assert (await client.get("/_sandbox/faults")).json() == []


async def test_open_ended_error_applies_until_cleared(client: httpx.AsyncClient) -> None:
    await add_fault(client, provider="sendgrid", status=500)
    assert [(await sendgrid(client)).status_code for _ in range(3)] == [500, 500, 500]
    assert (await client.delete("/_sandbox/faults", params={"provider": "sendgrid"})).is_success
    assert (await sendgrid(client)).status_code == 202


async def test_sendgrid_429_carries_retry_after(client: httpx.AsyncClient) -> None:
    await add_fault(client, provider="sendgrid", status=429, retry_after=7, count=1)
    response = await sendgrid(client)
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "7"
    assert response.json()["errors"][0]["message"] == "too many requests"


async def test_resend_429_is_rate_limit_exceeded_with_retry_after(
    client: httpx.AsyncClient,
) -> None:
    await add_fault(client, provider="resend", status=429, retry_after=2.5, count=1)
    response = await resend(client)
    assert response.status_code == 429
    assert response.json()["name"] == "rate_limit_exceeded"
    assert response.headers["retry-after"] == "3"


async def test_postmark_429_and_500_keep_postmark_body(client: httpx.AsyncClient) -> None:
    await add_fault(client, provider="postmark", status=429, count=1)
    await add_fault(client, provider="postmark", status=500, count=1)
    throttled, failed = await postmark(client), await postmark(client)
    assert (throttled.status_code, throttled.json()["ErrorCode"]) == (429, 429)
    assert failed.status_code == 500
    assert set(failed.json()) == {"ErrorCode", "Message"}


async def test_mailgun_429_says_when_to_try_again(client: httpx.AsyncClient) -> None:
    await add_fault(client, provider="mailgun", status=429, retry_after=60, count=1)
    response = await mailgun(client)
    assert response.status_code == 429
    _, _, when = response.json()["message"].partition("try again after ")
    assert parsedate_to_datetime(when) > datetime.now(UTC)


async def test_latency_without_status_delays_a_success(client: httpx.AsyncClient) -> None:
    await add_fault(client, provider="sendgrid", latency_ms=200, count=1)
    started = time.monotonic()
    response = await sendgrid(client)
    assert response.status_code == 202
    assert time.monotonic() - started >= 0.2


async def test_timeout_hangs_without_recording(client: httpx.AsyncClient) -> None:
    await add_fault(client, provider="sendgrid", mode="timeout", count=1)
    with pytest.raises(httpx.ReadTimeout):
        await sendgrid(client, timeout=SHORT)
    assert (await client.get("/_sandbox/messages")).json() == []
    assert (await sendgrid(client)).status_code == 202


async def test_accept_then_hang_records_but_client_times_out(client: httpx.AsyncClient) -> None:
    await add_fault(client, provider="sendgrid", mode="accept_then_hang", count=1)
    with pytest.raises(httpx.ReadTimeout):
        await sendgrid(client, timeout=SHORT)
    assert len((await client.get("/_sandbox/messages")).json()) == 1


async def test_resend_retry_after_lost_reply_replays_with_idempotency_key(
    client: httpx.AsyncClient,
) -> None:
    await add_fault(client, provider="resend", mode="accept_then_hang", count=1)
    with pytest.raises(httpx.ReadTimeout):
        await resend(client, **{"Idempotency-Key": "job-1"})
    retried = await resend(client, **{"Idempotency-Key": "job-1"})
    [message] = (await client.get("/_sandbox/messages")).json()
    assert retried.json()["id"] == message["message_id"]


async def test_check_scope_fails_credential_check_but_not_sends(
    client: httpx.AsyncClient,
) -> None:
    await add_fault(client, provider="sendgrid", status=503, scope="check")
    scopes = await client.get("/sendgrid/v3/scopes", headers={"Authorization": "Bearer SG.good"})
    assert scopes.status_code == 503
    assert (await sendgrid(client)).status_code == 202


async def test_malformed_fault_is_refused_with_error_envelope(client: httpx.AsyncClient) -> None:
    response = await client.post("/_sandbox/faults", json={"provider": "pigeon", "status": 500})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_fault"


async def test_stop_is_prompt_while_a_request_hangs() -> None:
    server = SandboxServer(smtp_port=None)
    await server.start()
    server.state.add_fault(FaultRule(provider="sendgrid", mode=FaultMode.TIMEOUT))
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as http:
        pending = asyncio.create_task(sendgrid(http))

        async def arrived() -> bool:
            return bool(server.state.recorder.stats()["requests"]["sendgrid"] == 1)

        await eventually(arrived)
        await asyncio.wait_for(server.stop(), timeout=5)
        response = await pending
    assert response.status_code == 503


def test_counted_rules_go_first_and_newest_open_rule_wins() -> None:
    book = FaultBook()
    book.add(FaultRule(provider="smtp", status=451))
    book.add(FaultRule(provider="smtp", status=421))
    book.add(FaultRule(provider="smtp", status=550, count=1))
    taken = [book.take("smtp", FaultScope.SEND) for _ in range(3)]
    assert [rule.status for rule in taken if rule] == [550, 421, 421]
    assert book.take("smtp", FaultScope.CHECK) is None
