"""Resend adapter: the exact request (with Idempotency-Key) and the §5 classification table."""

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
from homing.vendors.resend.adapter import ResendProvider
from tests.providers.replying import Reply, replying

KEY = "re_test_secret_key"
EMAIL = OutgoingEmail(
    job_id="0195a0c0-0000-7000-8000-000000000002",
    content=EmailContent(
        to="ada@example.com",
        from_="Homing <noreply@acme.test>",
        subject="Hello",
        text="plain body",
        html="<p>html body</p>",
    ),
    idempotency_key="job-0195a0c0",
)


@asynccontextmanager
async def resend(
    reply: Reply, config: dict[str, Any] | None = None
) -> AsyncIterator[tuple[ResendProvider, list[httpx.Request]]]:
    async with replying(reply) as (http, requests):
        yield ResendProvider({"api_key": KEY}, config or {}, http), requests


async def failure_of(reply: Reply) -> ProviderFailure:
    async with resend(reply) as (provider, _):
        with pytest.raises(ProviderFailure) as info:
            await provider.send(EMAIL)
    return info.value


def error(status: int, name: str, message: str = "") -> httpx.Response:
    return httpx.Response(status, json={"statusCode": status, "name": name, "message": message})


def test_resend_is_the_idempotent_provider() -> None:
    assert ResendProvider.supports_idempotency is True
    assert ResendProvider.name == "resend"


async def test_send_posts_emails_with_idempotency_key_tag_and_user_agent() -> None:
    reply = httpx.Response(200, json={"id": "4ef9a417-02e9-4d39-ad75-9611e0fcc33c"})
    async with resend(reply) as (provider, requests):
        result = await provider.send(EMAIL)

    assert result.provider_message_id == "4ef9a417-02e9-4d39-ad75-9611e0fcc33c"
    assert result.status_code == 200
    [request] = requests
    assert request.method == "POST"
    assert str(request.url) == "https://api.resend.com/emails"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Idempotency-Key"] == "job-0195a0c0"
    assert request.headers["User-Agent"].startswith("homing/")
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.content) == {
        "from": "Homing <noreply@acme.test>",
        "to": ["ada@example.com"],
        "subject": "Hello",
        "text": "plain body",
        "html": "<p>html body</p>",
        "tags": [{"name": "hjid", "value": EMAIL.job_id}],
    }


async def test_send_without_idempotency_key_omits_the_header() -> None:
    email = OutgoingEmail(
        job_id="j1", content=EmailContent(to="a@b.test", from_="c@d.test", subject="s", text="t")
    )
    config = {"base_url": "http://127.0.0.1:9/resend"}
    async with resend(httpx.Response(200, json={"id": "x"}), config) as (provider, requests):
        await provider.send(email)
    assert "Idempotency-Key" not in requests[0].headers
    assert str(requests[0].url) == "http://127.0.0.1:9/resend/emails"
    assert "html" not in json.loads(requests[0].content)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (error(400, "validation_error", "Invalid `to` field"), FailureClass.MESSAGE_PERMANENT),
        (error(400, "validation_error", "API key is invalid"), FailureClass.PROVIDER_PERMANENT),
        (error(400, "invalid_idempotency_key"), FailureClass.MESSAGE_PERMANENT),
        (error(401, "missing_api_key"), FailureClass.PROVIDER_PERMANENT),
        (error(401, "restricted_api_key"), FailureClass.PROVIDER_PERMANENT),
        (error(401, "validation_error", "API key is invalid"), FailureClass.PROVIDER_PERMANENT),
        (error(403, "invalid_api_key"), FailureClass.PROVIDER_PERMANENT),
        (
            error(403, "restricted_api_key", "This API key is not active"),
            FailureClass.PROVIDER_PERMANENT,
        ),
        (error(403, "suspended_api_key"), FailureClass.PROVIDER_PERMANENT),
        (
            error(403, "validation_error", "The acme.test domain is not verified"),
            FailureClass.MESSAGE_PERMANENT,
        ),
        (
            error(403, "validation_error", "You can only send testing emails to your own address"),
            FailureClass.MESSAGE_PERMANENT,
        ),
        (httpx.Response(403, text="error code: 1010"), FailureClass.PROVIDER_PERMANENT),
        (error(404, "not_found"), FailureClass.PROVIDER_PERMANENT),
        (error(405, "method_not_allowed"), FailureClass.PROVIDER_PERMANENT),
        (error(409, "concurrent_idempotent_requests"), FailureClass.TRANSIENT),
        (error(409, "resource_locked"), FailureClass.TRANSIENT),
        (error(409, "invalid_idempotent_request"), FailureClass.MESSAGE_PERMANENT),
        (error(422, "missing_required_field"), FailureClass.MESSAGE_PERMANENT),
        (error(422, "missing_required_parameter"), FailureClass.MESSAGE_PERMANENT),
        (error(422, "invalid_parameter"), FailureClass.MESSAGE_PERMANENT),
        (error(422, "invalid_attachment"), FailureClass.MESSAGE_PERMANENT),
        (error(429, "rate_limit_exceeded"), FailureClass.THROTTLED),
        (error(429, "daily_quota_exceeded"), FailureClass.THROTTLED),
        (error(429, "monthly_quota_exceeded"), FailureClass.PROVIDER_PERMANENT),
        (error(500, "application_error"), FailureClass.TRANSIENT),
        (error(503, "service_unavailable"), FailureClass.TRANSIENT),
        (httpx.Response(502, text="bad gateway"), FailureClass.TRANSIENT),
    ],
)
async def test_error_responses_follow_the_classification_table(
    reply: httpx.Response, expected: FailureClass
) -> None:
    failure = await failure_of(reply)
    assert failure.failure_class is expected
    assert failure.status_code == reply.status_code


async def test_rate_limit_honours_retry_after() -> None:
    reply = httpx.Response(
        429, headers={"retry-after": "2"}, json={"statusCode": 429, "name": "rate_limit_exceeded"}
    )
    failure = await failure_of(reply)
    assert failure.retry_after == 2.0


async def test_daily_quota_waits_until_next_utc_midnight() -> None:
    failure = await failure_of(error(429, "daily_quota_exceeded"))
    assert failure.retry_after is not None
    assert 0 < failure.retry_after <= 24 * 3600


async def test_read_timeout_is_uncertain() -> None:
    failure = await failure_of(httpx.ReadTimeout("timed out"))
    assert failure.failure_class is FailureClass.UNCERTAIN


async def test_connect_error_is_transient() -> None:
    failure = await failure_of(httpx.ConnectError("refused"))
    assert failure.failure_class is FailureClass.TRANSIENT


async def test_repr_and_detail_never_show_the_key() -> None:
    failure = await failure_of(error(401, "validation_error", f"API key is invalid: {KEY}"))
    assert KEY not in failure.detail
    async with resend(httpx.Response(200)) as (provider, _):
        assert KEY not in repr(provider)


@pytest.mark.parametrize(
    "reply",
    [
        httpx.Response(200, json={"object": "list", "data": [], "has_more": False}),
        error(401, "restricted_api_key", "This API key is restricted to only send emails"),
    ],
)
async def test_check_credentials_accepts_full_and_send_only_keys(reply: httpx.Response) -> None:
    async with resend(reply) as (provider, requests):
        await provider.check_credentials()
    assert requests[0].method == "GET"
    assert str(requests[0].url) == "https://api.resend.com/domains"
    assert requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert requests[0].headers["User-Agent"].startswith("homing/")


@pytest.mark.parametrize(
    "reply",
    [
        error(400, "validation_error", "API key is invalid"),
        error(401, "missing_api_key"),
        error(403, "invalid_api_key"),
        error(403, "restricted_api_key", "This API key is not active"),
    ],
)
async def test_check_credentials_rejects_bad_keys(reply: httpx.Response) -> None:
    async with resend(reply) as (provider, _):
        with pytest.raises(InvalidCredentials):
            await provider.check_credentials()


async def test_check_credentials_reports_outage_as_provider_failure() -> None:
    async with resend(error(503, "service_unavailable")) as (provider, _):
        with pytest.raises(ProviderFailure) as info:
            await provider.check_credentials()
    assert info.value.failure_class is FailureClass.TRANSIENT
