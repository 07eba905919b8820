"""Mailgun adapter: the exact form request and the §5 classification table."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

from homing.errors import InvalidCredentials
from homing.models import EmailContent, FailureClass
from homing.providers.base import OutgoingEmail, ProviderFailure
from homing.vendors.mailgun.adapter import MailgunProvider
from tests.providers.replying import Reply, replying

KEY = "key-mailgun-secret"
DOMAIN = "mg.acme.test"
EMAIL = OutgoingEmail(
    job_id="0195a0c0-0000-7000-8000-000000000004",
    content=EmailContent(
        to="ada@example.com",
        from_="Homing <noreply@mg.acme.test>",
        subject="Hello",
        text="plain body",
        html="<p>html body</p>",
    ),
)
NOT_ALLOWED = f"Domain {DOMAIN} is not allowed to send: "
BASIC = "Basic " + base64.b64encode(f"api:{KEY}".encode()).decode()


@asynccontextmanager
async def mailgun(
    reply: Reply, config: dict[str, Any] | None = None
) -> AsyncIterator[tuple[MailgunProvider, list[httpx.Request]]]:
    async with replying(reply) as (http, requests):
        yield MailgunProvider({"api_key": KEY, "domain": DOMAIN}, config or {}, http), requests


async def failure_of(reply: Reply) -> ProviderFailure:
    async with mailgun(reply) as (provider, _):
        with pytest.raises(ProviderFailure) as info:
            await provider.send(EMAIL)
    return info.value


def message(status: int, text: str) -> httpx.Response:
    return httpx.Response(status, json={"message": text})


async def test_send_posts_form_with_basic_auth_and_job_variable() -> None:
    reply = httpx.Response(
        200, json={"id": f"<20250301.1@{DOMAIN}>", "message": "Queued. Thank you."}
    )
    async with mailgun(reply) as (provider, requests):
        result = await provider.send(EMAIL)

    assert result.provider_message_id == f"<20250301.1@{DOMAIN}>"
    assert result.status_code == 200
    [request] = requests
    assert request.method == "POST"
    assert str(request.url) == f"https://api.mailgun.net/v3/{DOMAIN}/messages"
    assert request.headers["Authorization"] == BASIC
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert parse_qsl(request.content.decode()) == [
        ("from", "Homing <noreply@mg.acme.test>"),
        ("to", "ada@example.com"),
        ("subject", "Hello"),
        ("text", "plain body"),
        ("html", "<p>html body</p>"),
        ("v:hjid", EMAIL.job_id),
    ]


@pytest.mark.parametrize(
    ("config", "url"),
    [
        ({"region": "eu"}, f"https://api.eu.mailgun.net/v3/{DOMAIN}/messages"),
        (
            {"base_url": "http://127.0.0.1:9/mg/", "region": "eu"},
            f"http://127.0.0.1:9/mg/v3/{DOMAIN}/messages",
        ),
    ],
)
async def test_send_honours_region_and_base_url(config: dict[str, Any], url: str) -> None:
    async with mailgun(httpx.Response(200, json={"id": "<x>"}), config) as (provider, requests):
        await provider.send(EMAIL)
    assert str(requests[0].url) == url


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            message(400, "to parameter is not a valid address. please check documentation"),
            FailureClass.MESSAGE_PERMANENT,
        ),
        (
            message(
                400,
                NOT_ALLOWED + "Sandbox subdomains are for test purposes only",
            ),
            FailureClass.PROVIDER_PERMANENT,
        ),
        (
            message(
                400,
                f"Domain {DOMAIN} is not allowed to send: Free accounts are for test purposes only",
            ),
            FailureClass.PROVIDER_PERMANENT,
        ),
        (
            message(
                400, f"Domain {DOMAIN} is not allowed to send: Please activate your Mailgun account"
            ),
            FailureClass.PROVIDER_PERMANENT,
        ),
        (
            message(
                400,
                NOT_ALLOWED + "The domain is unverified and requires DNS config",
            ),
            FailureClass.MESSAGE_PERMANENT,
        ),
        (httpx.Response(401, text="Forbidden"), FailureClass.PROVIDER_PERMANENT),
        (message(402, "Request failed"), FailureClass.PROVIDER_PERMANENT),
        (
            message(403, "Domain is not allowed to send large batches yet"),
            FailureClass.PROVIDER_PERMANENT,
        ),
        (message(404, "Domain not found"), FailureClass.PROVIDER_PERMANENT),
        (message(413, "request entity too large"), FailureClass.MESSAGE_PERMANENT),
        (message(429, "Account request limit exceeded"), FailureClass.THROTTLED),
        (message(500, "Internal error"), FailureClass.TRANSIENT),
        (httpx.Response(502, text="Bad Gateway"), FailureClass.TRANSIENT),
        (httpx.Response(503), FailureClass.TRANSIENT),
        (httpx.Response(504), FailureClass.TRANSIENT),
    ],
)
async def test_error_responses_follow_the_classification_table(
    reply: httpx.Response, expected: FailureClass
) -> None:
    failure = await failure_of(reply)
    assert failure.failure_class is expected
    assert failure.status_code == reply.status_code


async def test_throttled_parses_try_again_after_date() -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    failure = await failure_of(
        message(429, f"Account recipient limit exceeded, try again after {when}")
    )
    assert failure.failure_class is FailureClass.THROTTLED
    assert failure.retry_after is not None
    assert 85 <= failure.retry_after <= 90


async def test_throttled_falls_back_to_retry_after_header() -> None:
    reply = httpx.Response(429, headers={"Retry-After": "11"}, json={"message": "limit exceeded"})
    failure = await failure_of(reply)
    assert failure.retry_after == 11.0


async def test_read_timeout_is_uncertain() -> None:
    failure = await failure_of(httpx.ReadTimeout("timed out"))
    assert failure.failure_class is FailureClass.UNCERTAIN


async def test_connect_error_is_transient() -> None:
    failure = await failure_of(httpx.ConnectError("refused"))
    assert failure.failure_class is FailureClass.TRANSIENT


async def test_repr_never_shows_the_key() -> None:
    async with mailgun(httpx.Response(200)) as (provider, _):
        assert KEY not in repr(provider)


async def test_check_credentials_lists_one_domain() -> None:
    reply = httpx.Response(200, json={"total_count": 1, "items": [{"name": DOMAIN}]})
    async with mailgun(reply) as (provider, requests):
        await provider.check_credentials()
    assert requests[0].method == "GET"
    assert str(requests[0].url) == "https://api.mailgun.net/v3/domains?limit=1"
    assert requests[0].headers["Authorization"] == BASIC


async def test_check_credentials_rejects_forbidden_key() -> None:
    async with mailgun(httpx.Response(401, text="Forbidden")) as (provider, _):
        with pytest.raises(InvalidCredentials) as info:
            await provider.check_credentials()
    assert KEY not in info.value.message


async def test_check_credentials_reports_outage_as_provider_failure() -> None:
    async with mailgun(httpx.ConnectError("refused")) as (provider, _):
        with pytest.raises(ProviderFailure) as info:
            await provider.check_credentials()
    assert info.value.failure_class is FailureClass.TRANSIENT


async def test_missing_domain_is_invalid_credentials() -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(InvalidCredentials, match="'domain'"):
            MailgunProvider({"api_key": KEY}, {}, http)
