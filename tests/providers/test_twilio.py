"""Twilio adapter: the exact request, the credential check and the classification table."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

from homing.errors import InvalidCredentials
from homing.models import FailureClass, SmsContent
from homing.providers.base import OutgoingSms, ProviderFailure
from homing.vendors.twilio.adapter import TwilioProvider
from tests.providers.replying import Reply, replying

SID = "AC" + "a" * 32
TOKEN = "tw-auth-token-secret"
SMS = OutgoingSms(
    job_id="0195a0c0-0000-7000-8000-000000000003",
    content=SmsContent(to="+14155552671", from_=None, body="Your code is 1234"),
)
CREATED = {"sid": "SM" + "b" * 32, "status": "queued"}


@asynccontextmanager
async def twilio(
    reply: Reply, config: dict[str, Any] | None = None
) -> AsyncIterator[tuple[TwilioProvider, list[httpx.Request]]]:
    config = {"from": "+14155550100"} if config is None else config
    async with replying(reply) as (http, requests):
        yield TwilioProvider({"account_sid": SID, "auth_token": TOKEN}, config, http), requests


async def failure_of(reply: Reply) -> ProviderFailure:
    async with twilio(reply) as (provider, _):
        with pytest.raises(ProviderFailure) as info:
            await provider.send(SMS)
    return info.value


def _error(status: int, code: int, message: str = "refused") -> httpx.Response:
    return httpx.Response(status, json={"code": code, "message": message, "status": status})


async def test_send_posts_the_form_with_basic_auth() -> None:
    async with twilio(httpx.Response(201, json=CREATED)) as (provider, requests):
        result = await provider.send(SMS)
    [request] = requests
    assert request.method == "POST"
    assert str(request.url) == f"https://api.twilio.com/2010-04-01/Accounts/{SID}/Messages.json"
    assert request.headers["content-type"] == "application/x-www-form-urlencoded"
    expected = base64.b64encode(f"{SID}:{TOKEN}".encode()).decode()
    assert request.headers["authorization"] == f"Basic {expected}"
    assert dict(parse_qsl(request.content.decode())) == {
        "To": "+14155552671",
        "From": "+14155550100",
        "Body": "Your code is 1234",
    }
    assert (result.provider_message_id, result.status_code) == (CREATED["sid"], 201)


async def test_the_job_sender_wins_and_a_messaging_service_is_the_fallback() -> None:
    own = OutgoingSms(SMS.job_id, SmsContent(to="+14155552671", from_="Acme", body="hi"))
    async with twilio(httpx.Response(201, json=CREATED), {"from": "+1999"}) as (provider, reqs):
        await provider.send(own)
    assert dict(parse_qsl(reqs[0].content.decode()))["From"] == "Acme"
    service = {"messaging_service_sid": "MG" + "c" * 32, "status_callback": "https://h/cb"}
    async with twilio(httpx.Response(201, json=CREATED), service) as (provider, reqs):
        await provider.send(SMS)
    form = dict(parse_qsl(reqs[0].content.decode()))
    assert (form["MessagingServiceSid"], form["StatusCallback"]) == (
        service["messaging_service_sid"],
        "https://h/cb",
    )
    assert "From" not in form


async def test_no_sender_anywhere_is_provider_permanent_without_a_call() -> None:
    async with twilio(httpx.Response(201, json=CREATED), {}) as (provider, requests):
        with pytest.raises(ProviderFailure) as info:
            await provider.send(SMS)
    assert info.value.failure_class is FailureClass.PROVIDER_PERMANENT
    assert requests == []


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (_error(400, 21610), FailureClass.MESSAGE_PERMANENT),
        (_error(429, 20429), FailureClass.THROTTLED),
        (_error(400, 21211), FailureClass.MESSAGE_PERMANENT),
        (_error(400, 21614), FailureClass.MESSAGE_PERMANENT),
        (_error(401, 20003), FailureClass.PROVIDER_PERMANENT),
        (httpx.Response(401), FailureClass.PROVIDER_PERMANENT),
        (_error(400, 21606), FailureClass.PROVIDER_PERMANENT),
        (_error(400, 21608), FailureClass.PROVIDER_PERMANENT),
        (_error(400, 99999), FailureClass.MESSAGE_PERMANENT),
        (_error(503, 20503), FailureClass.TRANSIENT),
        (httpx.Response(500, text="<html>oops</html>"), FailureClass.TRANSIENT),
        (httpx.ConnectError("refused"), FailureClass.TRANSIENT),
        (httpx.ReadTimeout("slow"), FailureClass.UNCERTAIN),
    ],
)
async def test_classification_table(reply: Reply, expected: FailureClass) -> None:
    assert (await failure_of(reply)).failure_class is expected


async def test_21610_asks_for_the_recipient_to_be_suppressed() -> None:
    stopped = await failure_of(_error(400, 21610, "Attempt to send to unsubscribed recipient"))
    assert stopped.suppress == "opted_out"
    assert "21610" in stopped.detail
    assert (await failure_of(_error(400, 21211))).suppress is None


async def test_a_429_honours_retry_after() -> None:
    throttled = httpx.Response(429, json={"code": 20429}, headers={"Retry-After": "7"})
    assert (await failure_of(throttled)).retry_after == 7


async def test_an_echoed_token_never_reaches_the_detail() -> None:
    failure = await failure_of(_error(400, 21211, f"bad token {TOKEN}"))
    assert TOKEN not in failure.detail
    assert TOKEN not in repr(failure)


async def test_a_hostile_sid_in_the_answer_is_not_kept() -> None:
    async with twilio(httpx.Response(201, json={"sid": "SM<script>" * 100})) as (provider, _):
        result = await provider.send(SMS)
    assert result.provider_message_id is None


async def test_credential_check_reads_the_account() -> None:
    active = httpx.Response(200, json={"sid": SID, "status": "active"})
    async with twilio(active) as (provider, requests):
        await provider.check_credentials()
    assert requests[0].method == "GET"
    assert str(requests[0].url) == f"https://api.twilio.com/2010-04-01/Accounts/{SID}.json"
    for reply in (_error(401, 20003), httpx.Response(200, json={"status": "suspended"})):
        async with twilio(reply) as (provider, _):
            with pytest.raises(InvalidCredentials) as info:
                await provider.check_credentials()
        assert TOKEN not in str(info.value)


def test_repr_shows_no_credential() -> None:
    provider = TwilioProvider({"account_sid": SID, "auth_token": TOKEN}, {}, httpx.AsyncClient())
    assert TOKEN not in repr(provider)
