"""Vonage adapter: the exact Messages API request, the credential check, the table."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from homing.errors import InvalidCredentials
from homing.models import FailureClass, SmsContent
from homing.providers.base import OutgoingSms, ProviderFailure
from homing.vendors.vonage.adapter import VonageProvider
from tests.providers.replying import Reply, replying

KEY = "vn-key"
SECRET = "vn-api-secret-value"
SMS = OutgoingSms(
    job_id="0195a0c0-0000-7000-8000-000000000003",
    content=SmsContent(to="+447911123456", from_=None, body="Your code is 1234"),
)
ACCEPTED = {"message_uuid": "aaaaaaaa-bbbb-cccc-dddd-0123456789ab"}


@asynccontextmanager
async def vonage(
    reply: Reply, config: dict[str, Any] | None = None
) -> AsyncIterator[tuple[VonageProvider, list[httpx.Request]]]:
    config = {"from": "Acme"} if config is None else config
    async with replying(reply) as (http, requests):
        yield VonageProvider({"api_key": KEY, "api_secret": SECRET}, config, http), requests


async def failure_of(reply: Reply) -> ProviderFailure:
    async with vonage(reply) as (provider, _):
        with pytest.raises(ProviderFailure) as info:
            await provider.send(SMS)
    return info.value


def _problem(status: int, title: str = "Invalid params", detail: str = "bad") -> httpx.Response:
    body = {"type": "https://developer.vonage.com/api-errors", "title": title, "detail": detail}
    return httpx.Response(status, json=body)


async def test_send_posts_the_messages_api_json_with_basic_auth() -> None:
    async with vonage(httpx.Response(202, json=ACCEPTED)) as (provider, requests):
        result = await provider.send(SMS)
    [request] = requests
    assert (request.method, str(request.url)) == ("POST", "https://api.nexmo.com/v1/messages")
    expected = base64.b64encode(f"{KEY}:{SECRET}".encode()).decode()
    assert request.headers["authorization"] == f"Basic {expected}"
    assert json.loads(request.content) == {
        "message_type": "text",
        "channel": "sms",
        "to": "447911123456",
        "from": "Acme",
        "text": "Your code is 1234",
        "client_ref": SMS.job_id,
    }
    assert (result.provider_message_id, result.status_code) == (ACCEPTED["message_uuid"], 202)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (_problem(401, "Unauthorized"), FailureClass.PROVIDER_PERMANENT),
        (_problem(402, "Low balance"), FailureClass.PROVIDER_PERMANENT),
        (_problem(422), FailureClass.MESSAGE_PERMANENT),
        (_problem(429, "Rate Limit Hit"), FailureClass.THROTTLED),
        (_problem(500, "Internal Error"), FailureClass.TRANSIENT),
        (httpx.Response(404, text="not here"), FailureClass.PROVIDER_PERMANENT),
        (httpx.ConnectError("refused"), FailureClass.TRANSIENT),
        (httpx.ReadTimeout("slow"), FailureClass.UNCERTAIN),
    ],
)
async def test_classification_table(reply: Reply, expected: FailureClass) -> None:
    assert (await failure_of(reply)).failure_class is expected


async def test_the_problem_title_and_detail_are_the_error_without_the_secret() -> None:
    failure = await failure_of(_problem(422, "Invalid params", f"echo {SECRET}"))
    assert failure.detail.startswith("vonage: HTTP 422: Invalid params echo ***")


async def test_a_hostile_uuid_is_not_kept() -> None:
    async with vonage(httpx.Response(202, json={"message_uuid": "x" * 10_000})) as (p, _):
        assert (await p.send(SMS)).provider_message_id is None


async def test_credential_check_lists_applications() -> None:
    async with vonage(httpx.Response(200, json={"page_size": 1})) as (provider, requests):
        await provider.check_credentials()
    assert str(requests[0].url) == "https://api.nexmo.com/v2/applications?page_size=1"
    async with vonage(_problem(401, "Unauthorized")) as (provider, _):
        with pytest.raises(InvalidCredentials):
            await provider.check_credentials()
