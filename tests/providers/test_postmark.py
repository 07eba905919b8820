"""Postmark adapter: the exact request and the ErrorCode classification table."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from homing.errors import InvalidCredentials
from homing.models import EmailContent, FailureClass
from homing.providers.base import OutgoingEmail, ProviderFailure
from homing.vendors.postmark.adapter import PostmarkProvider
from tests.providers.replying import Reply, replying

KEY = "pm-server-token-secret"
EMAIL = OutgoingEmail(
    job_id="0195a0c0-0000-7000-8000-000000000003",
    content=EmailContent(
        to="ada@example.com",
        from_="Homing <noreply@acme.test>",
        subject="Hello",
        text="plain body",
        html="<p>html body</p>",
    ),
)
OK_BODY = {
    "To": "ada@example.com",
    "SubmittedAt": "2025-03-01T12:00:00Z",
    "MessageID": "b7bc2f4a-e38e-4336-af7d-e6c392c2f817",
    "ErrorCode": 0,
    "Message": "OK",
}


@asynccontextmanager
async def postmark(
    reply: Reply, config: dict[str, Any] | None = None
) -> AsyncIterator[tuple[PostmarkProvider, list[httpx.Request]]]:
    async with replying(reply) as (http, requests):
        yield PostmarkProvider({"api_key": KEY}, config or {}, http), requests


async def failure_of(reply: Reply) -> ProviderFailure:
    async with postmark(reply) as (provider, _):
        with pytest.raises(ProviderFailure) as info:
            await provider.send(EMAIL)
    return info.value


def error(status: int, code: int, message: str = "") -> httpx.Response:
    return httpx.Response(status, json={"ErrorCode": code, "Message": message})


async def test_send_posts_email_with_server_token_and_metadata() -> None:
    async with postmark(httpx.Response(200, json=OK_BODY)) as (provider, requests):
        result = await provider.send(EMAIL)

    assert result.provider_message_id == OK_BODY["MessageID"]
    assert result.status_code == 200
    [request] = requests
    assert request.method == "POST"
    assert str(request.url) == "https://api.postmarkapp.com/email"
    assert request.headers["X-Postmark-Server-Token"] == KEY
    assert request.headers["Accept"] == "application/json"
    assert request.headers["Content-Type"] == "application/json"
    assert "Authorization" not in request.headers
    assert json.loads(request.content) == {
        "From": "Homing <noreply@acme.test>",
        "To": "ada@example.com",
        "Subject": "Hello",
        "TextBody": "plain body",
        "HtmlBody": "<p>html body</p>",
        "Metadata": {"hjid": EMAIL.job_id},
        "MessageStream": "outbound",
    }


async def test_send_honours_base_url_and_message_stream() -> None:
    config = {"base_url": "http://127.0.0.1:9/postmark", "message_stream": "transactional"}
    async with postmark(httpx.Response(200, json=OK_BODY), config) as (provider, requests):
        await provider.send(EMAIL)
    assert str(requests[0].url) == "http://127.0.0.1:9/postmark/email"
    assert json.loads(requests[0].content)["MessageStream"] == "transactional"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            error(401, 10, "No Account or Server API tokens were supplied"),
            FailureClass.PROVIDER_PERMANENT,
        ),
        (httpx.Response(401), FailureClass.PROVIDER_PERMANENT),
        (error(422, 10, "Bad token"), FailureClass.PROVIDER_PERMANENT),
        (error(422, 100, "Maintenance"), FailureClass.TRANSIENT),
        (error(422, 300, "Invalid email request"), FailureClass.MESSAGE_PERMANENT),
        (error(422, 400, "Sender signature not found"), FailureClass.MESSAGE_PERMANENT),
        (error(422, 401, "Sender signature not confirmed"), FailureClass.MESSAGE_PERMANENT),
        (error(422, 402, "Invalid JSON"), FailureClass.MESSAGE_PERMANENT),
        (error(422, 403, "Incompatible JSON"), FailureClass.MESSAGE_PERMANENT),
        (error(422, 405, "Not allowed to send"), FailureClass.PROVIDER_PERMANENT),
        (
            error(422, 406, "Found inactive addresses: ada@example.com"),
            FailureClass.MESSAGE_PERMANENT,
        ),
        (error(422, 409, "JSON required"), FailureClass.MESSAGE_PERMANENT),
        (error(422, 410, "Too many batch messages"), FailureClass.MESSAGE_PERMANENT),
        (error(422, 411, "Forbidden attachment type"), FailureClass.MESSAGE_PERMANENT),
        (error(422, 412, "Account is pending"), FailureClass.PROVIDER_PERMANENT),
        (error(422, 413, "Account may not send"), FailureClass.PROVIDER_PERMANENT),
        # HTTP 413 is the message over 10 MB (developer/api/overview#http-response-codes),
        # not the API's ErrorCode 413, whatever the body says.
        (httpx.Response(413, text="Payload Too Large"), FailureClass.MESSAGE_PERMANENT),
        (error(413, 413, "Request Entity Too Large"), FailureClass.MESSAGE_PERMANENT),
        (error(422, 429, "Rate limit exceeded"), FailureClass.THROTTLED),
        (error(422, 999, "Something new"), FailureClass.MESSAGE_PERMANENT),
        (httpx.Response(429), FailureClass.THROTTLED),
        (httpx.Response(500), FailureClass.TRANSIENT),
        (httpx.Response(503, text="Service Unavailable"), FailureClass.TRANSIENT),
        (error(200, 406, "Found inactive addresses"), FailureClass.MESSAGE_PERMANENT),
    ],
)
async def test_error_responses_follow_the_classification_table(
    reply: httpx.Response, expected: FailureClass
) -> None:
    failure = await failure_of(reply)
    assert failure.failure_class is expected
    assert failure.status_code == reply.status_code


async def test_inactive_recipient_detail_lists_the_addresses() -> None:
    failure = await failure_of(error(422, 406, "Found inactive addresses: ada@example.com."))
    assert "ErrorCode 406" in failure.detail
    assert "ada@example.com" in failure.detail


async def test_throttled_honours_retry_after_when_present() -> None:
    failure = await failure_of(httpx.Response(429, headers={"Retry-After": "5"}))
    assert failure.retry_after == 5.0


async def test_read_timeout_is_uncertain() -> None:
    failure = await failure_of(httpx.ReadTimeout("timed out"))
    assert failure.failure_class is FailureClass.UNCERTAIN


async def test_connect_error_is_transient() -> None:
    failure = await failure_of(httpx.ConnectError("refused"))
    assert failure.failure_class is FailureClass.TRANSIENT


async def test_repr_never_shows_the_token() -> None:
    async with postmark(httpx.Response(200)) as (provider, _):
        assert KEY not in repr(provider)


async def test_check_credentials_gets_server_with_the_token() -> None:
    async with postmark(httpx.Response(200, json={"ID": 1, "Name": "acme"})) as (
        provider,
        requests,
    ):
        await provider.check_credentials()
    assert requests[0].method == "GET"
    assert str(requests[0].url) == "https://api.postmarkapp.com/server"
    assert requests[0].headers["X-Postmark-Server-Token"] == KEY


@pytest.mark.parametrize("reply", [error(401, 10, "Bad token"), httpx.Response(401)])
async def test_check_credentials_rejects_bad_token(reply: httpx.Response) -> None:
    async with postmark(reply) as (provider, _):
        with pytest.raises(InvalidCredentials):
            await provider.check_credentials()


async def test_check_credentials_reports_outage_as_provider_failure() -> None:
    async with postmark(httpx.Response(503)) as (provider, _):
        with pytest.raises(ProviderFailure) as info:
            await provider.check_credentials()
    assert info.value.failure_class is FailureClass.TRANSIENT
