"""SendGrid adapter: the exact Mail Send request and the §5 classification table."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from homing.errors import InvalidCredentials
from homing.models import EmailContent, FailureClass
from homing.providers.base import OutgoingEmail, ProviderFailure
from homing.vendors.sendgrid.adapter import SendGridProvider
from tests.providers.replying import Reply, replying

KEY = "SG.test-secret-key"
EMAIL = OutgoingEmail(
    job_id="0195a0c0-0000-7000-8000-000000000001",
    content=EmailContent(
        to="Ada <ada@example.com>",
        from_="Homing <noreply@acme.test>",
        subject="Hello",
        text="plain body",
        html="<p>html body</p>",
    ),
    idempotency_key="idem-1",
)


@asynccontextmanager
async def sendgrid(
    reply: Reply, config: dict[str, Any] | None = None
) -> AsyncIterator[tuple[SendGridProvider, list[httpx.Request]]]:
    async with replying(reply) as (http, requests):
        yield SendGridProvider({"api_key": KEY}, config or {}, http), requests


async def failure_of(reply: Reply) -> ProviderFailure:
    async with sendgrid(reply) as (provider, _):
        with pytest.raises(ProviderFailure) as info:
            await provider.send(EMAIL)
    return info.value


async def test_send_posts_mail_send_json_and_returns_x_message_id() -> None:
    reply = httpx.Response(202, headers={"X-Message-Id": "sg-msg-1"})
    async with sendgrid(reply) as (provider, requests):
        result = await provider.send(EMAIL)

    assert (result.provider_message_id, result.status_code) == ("sg-msg-1", 202)
    [request] = requests
    assert request.method == "POST"
    assert str(request.url) == "https://api.sendgrid.com/v3/mail/send"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Accept"] == "application/json"
    assert request.headers["Content-Type"] == "application/json"
    assert "Idempotency-Key" not in request.headers
    assert json.loads(request.content) == {
        "personalizations": [{"to": [{"email": "ada@example.com", "name": "Ada"}]}],
        "from": {"email": "noreply@acme.test", "name": "Homing"},
        "subject": "Hello",
        "content": [
            {"type": "text/plain", "value": "plain body"},
            {"type": "text/html", "value": "<p>html body</p>"},
        ],
        "custom_args": {"hjid": EMAIL.job_id},
    }


@pytest.mark.parametrize(
    ("config", "url"),
    [
        (
            {"base_url": "http://127.0.0.1:8025/sendgrid/"},
            "http://127.0.0.1:8025/sendgrid/v3/mail/send",
        ),
        ({"region": "eu"}, "https://api.eu.sendgrid.com/v3/mail/send"),
    ],
)
async def test_send_honours_base_url_and_region(config: dict[str, Any], url: str) -> None:
    async with sendgrid(httpx.Response(202), config) as (provider, requests):
        result = await provider.send(EMAIL)
    assert str(requests[0].url) == url
    assert result.provider_message_id is None


def errors(message: str, field: str | None = None) -> dict[str, Any]:
    return {"errors": [{"message": message, "field": field, "help": None}]}


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            400,
            errors("personalizations required", "personalizations"),
            FailureClass.MESSAGE_PERMANENT,
        ),
        (
            401,
            errors("authorization grant is invalid, expired, or revoked"),
            FailureClass.PROVIDER_PERMANENT,
        ),
        (403, errors("access forbidden"), FailureClass.PROVIDER_PERMANENT),
        (
            403,
            errors("does not match a verified Sender Identity", "from"),
            FailureClass.MESSAGE_PERMANENT,
        ),
        (406, errors("Accept header missing"), FailureClass.PROVIDER_PERMANENT),
        (413, errors("too large"), FailureClass.MESSAGE_PERMANENT),
        (429, errors("too many requests"), FailureClass.THROTTLED),
        (451, errors("data residency"), FailureClass.PROVIDER_PERMANENT),
        (500, errors("internal error"), FailureClass.TRANSIENT),
        (502, None, FailureClass.TRANSIENT),
        (503, None, FailureClass.TRANSIENT),
    ],
)
async def test_error_responses_follow_the_classification_table(
    status: int, body: dict[str, Any] | None, expected: FailureClass
) -> None:
    reply = httpx.Response(status, json=body) if body else httpx.Response(status)
    failure = await failure_of(reply)
    assert failure.failure_class is expected
    assert failure.status_code == status
    assert failure.detail.startswith(f"sendgrid: HTTP {status}")


async def test_throttled_waits_until_x_ratelimit_reset() -> None:
    reset = int(time.time()) + 30
    failure = await failure_of(httpx.Response(429, headers={"X-RateLimit-Reset": str(reset)}))
    assert failure.retry_after is not None
    assert 25 <= failure.retry_after <= 30


async def test_throttled_prefers_retry_after_header() -> None:
    failure = await failure_of(httpx.Response(429, headers={"Retry-After": "7"}))
    assert failure.retry_after == 7.0


async def test_read_timeout_is_uncertain() -> None:
    failure = await failure_of(httpx.ReadTimeout("timed out"))
    assert failure.failure_class is FailureClass.UNCERTAIN


async def test_connect_error_is_transient() -> None:
    failure = await failure_of(httpx.ConnectError("refused"))
    assert failure.failure_class is FailureClass.TRANSIENT


async def test_echoed_key_never_reaches_the_detail_or_repr() -> None:
    failure = await failure_of(httpx.Response(401, json=errors(f"bad key {KEY}")))
    assert KEY not in failure.detail
    assert KEY not in repr(failure)
    async with sendgrid(httpx.Response(202)) as (provider, _):
        assert KEY not in repr(provider)


async def test_check_credentials_accepts_key_with_mail_send_scope() -> None:
    reply = httpx.Response(200, json={"scopes": ["mail.send", "alerts.read"]})
    async with sendgrid(reply) as (provider, requests):
        await provider.check_credentials()
    assert requests[0].method == "GET"
    assert str(requests[0].url) == "https://api.sendgrid.com/v3/scopes"
    assert requests[0].headers["Authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(
    "reply",
    [
        httpx.Response(200, json={"scopes": ["alerts.read"]}),
        httpx.Response(401, json=errors("authorization grant is invalid")),
        httpx.Response(403, json=errors("access forbidden")),
    ],
)
async def test_check_credentials_rejects_bad_or_unscoped_keys(reply: httpx.Response) -> None:
    async with sendgrid(reply) as (provider, _):
        with pytest.raises(InvalidCredentials) as info:
            await provider.check_credentials()
    assert KEY not in info.value.message


async def test_check_credentials_reports_outage_as_provider_failure() -> None:
    async with sendgrid(httpx.Response(503)) as (provider, _):
        with pytest.raises(ProviderFailure) as info:
            await provider.check_credentials()
    assert info.value.failure_class is FailureClass.TRANSIENT


async def test_missing_api_key_is_invalid_credentials() -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(InvalidCredentials):
            SendGridProvider({}, {}, http)
