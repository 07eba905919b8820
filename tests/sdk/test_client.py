"""The Python SDK against a real ``homing run`` and the sandbox, over real HTTP: send,
read a job COMPLETED, page through jobs, errors as their classes, 429 retries with one
Idempotency-Key, a webhook delivery verified with the SDK's helper."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from homing_client import AsyncClient, Client, errors, models, verify_webhook

from tests.processes import eventually
from tests.sdk.conftest import Server
from tests.webhooks.receiver import Receiver

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[Client]:
    with Client(base_url=server.url, api_key=server.api_key) as sdk:
        sdk.providers.create(
            channel="email",
            provider="resend",
            credentials={"api_key": "re_sdk_test_key_123456"},
            config={"base_url": server.sandbox_provider("resend")},
        )
        yield sdk


def _completed(client: Client, job_id: str) -> models.JobPublic:
    deadline = time.monotonic() + 20
    while True:
        job = client.jobs.get(job_id)
        if job.status == "COMPLETED" or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def test_an_email_sent_with_the_sdk_is_read_back_completed(client: Client) -> None:
    queued = client.email.send(
        to="ada@example.com", from_="app@acme.example", subject="Hello", text="Hi Ada"
    )
    assert isinstance(queued, models.Queued)
    job = _completed(client, queued.id)
    assert isinstance(job, models.JobPublic)
    assert job.status == "COMPLETED"
    assert job.channel == "email"
    assert [a.outcome for a in job.attempts] == ["success"]


def test_jobs_list_iterates_every_cursor_page(client: Client) -> None:
    sent = {
        client.email.send(to=f"p{i}@example.com", from_="a@acme.example", subject="s", text="t").id
        for i in range(5)
    }
    first = client.jobs.page(limit=2)
    assert len(first.data) == 2 and first.next_cursor
    listed = [job.id for job in client.jobs.list(limit=2)]
    assert len(listed) == len(set(listed)), "no job is listed twice across pages"
    assert sent <= set(listed)


def test_an_explicit_idempotency_key_makes_a_repeat_the_same_job(client: Client) -> None:
    message = {"to": "b@example.com", "from_": "a@acme.example", "subject": "s", "text": "t"}
    first = client.email.send(**message, idempotency_key="order-42")
    again = client.email.send(**message, idempotency_key="order-42")
    assert again.id == first.id
    with pytest.raises(errors.IdempotencyConflictError) as caught:
        client.email.send(**{**message, "text": "other"}, idempotency_key="order-42")
    assert caught.value.status == 422


def test_errors_raise_the_class_of_their_code(client: Client, server: Server) -> None:
    with pytest.raises(errors.ObjectNotFoundError) as missing:
        client.jobs.get("00000000-0000-0000-0000-000000000000")
    assert (missing.value.status, missing.value.code) == (404, "not_found")
    assert isinstance(missing.value, errors.NotFoundError)
    assert missing.value.request_id
    with pytest.raises(errors.ValidationError) as invalid:
        client.email.send(to="x", from_="a@acme.example", subject="s", text="t")
    assert invalid.value.details["errors"]
    with (
        Client(base_url=server.url, api_key="hk_not_a_key") as stranger,
        pytest.raises(errors.UnauthenticatedError),
    ):
        stranger.jobs.page()


def test_a_timeout_raises_homing_timeout(server: Server) -> None:
    # A listener that never answers: a timeout for certain (a microsecond's timeout
    # against the real server was sometimes beaten by a quick answer).
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with (
            Client(base_url=url, api_key=server.api_key, timeout=0.2, max_retries=0) as hurried,
            pytest.raises(errors.HomingTimeout),
        ):
            hurried.jobs.page()
    with (
        Client(base_url="http://127.0.0.1:9", api_key="k") as nowhere,
        pytest.raises(errors.HomingConnectionError),
    ):
        nowhere.jobs.page()


def test_a_429_is_retried_after_its_retry_after_with_the_same_idempotency_key(
    server: Server,
) -> None:
    sent: list[httpx.Request] = []
    waits: list[float] = []
    http = httpx.Client(timeout=10, event_hooks={"request": [sent.append]})
    limited = Client(
        base_url=server.url,
        api_key=server.limited_key,
        max_retries=2,
        backoff=0.01,
        sleep=waits.append,
        http_client=http,
    )
    with limited:
        # One request a minute: this send has the window, so the next one is refused.
        with pytest.raises(errors.UnprocessableError):
            limited.email.send(to="x", from_="a@acme.example", subject="s", text="t")
        with pytest.raises(errors.RateLimitedError) as refused:
            limited.email.send(to="c@example.com", from_="a@acme.example", subject="s", text="t")
    assert refused.value.status == 429
    retry_after = refused.value.retry_after
    assert retry_after is not None and 1 <= retry_after <= 60
    sends = [r for r in sent if r.url.path == "/v1/notifications/email"]
    assert len(sends) == 4, "the first send, then the second and its two retries"
    keys = [r.headers["Idempotency-Key"] for r in sends]
    assert keys[1] == keys[2] == keys[3], "one key for a call and its retries"
    assert keys[0] != keys[1], "a new key for each call"
    assert len(waits) == 2
    for wait in waits:
        assert retry_after - 1 <= wait <= retry_after + 0.01, "the wait honours Retry-After"


async def test_the_async_client_sends_and_pages_the_same(server: Server, client: Client) -> None:
    async with AsyncClient(base_url=server.url, api_key=server.api_key) as sdk:
        queued = await sdk.email.send(
            to="async@example.com", from_="a@acme.example", subject="s", text="t"
        )

        async def completed() -> models.JobPublic | None:
            job = await sdk.jobs.get(queued.id)
            return job if job.status == "COMPLETED" else None

        await eventually(completed, what="the async send to complete")
        ids = [job.id async for job in sdk.jobs.list(limit=3)]
        assert queued.id in ids
        with pytest.raises(errors.ObjectNotFoundError):
            await sdk.jobs.get("00000000-0000-0000-0000-000000000000")


async def test_a_webhook_from_homing_verifies_with_the_sdk_helper(
    server: Server, client: Client, receiver: Receiver
) -> None:
    secret = client.webhooks.create_secret().secret
    payload = {"order": 42, "status": "paid"}
    client.webhooks.send(url=receiver.url + "/hook", payload=payload)

    async def arrived() -> bool:
        return bool(receiver.requests)

    await eventually(arrived, what="the webhook delivery")
    delivery = receiver.requests[0]
    assert verify_webhook(secret, delivery.headers, delivery.body) == payload
    with pytest.raises(Exception, match="no matching signature"):
        verify_webhook(secret, delivery.headers, delivery.body + b" ")


def test_the_served_openapi_document_is_the_checked_in_one(server: Server) -> None:
    served = httpx.get(server.url + "/openapi.json", timeout=10).json()
    assert served == json.loads((ROOT / "docs" / "openapi.json").read_text())
