"""Slack incoming-webhook adapter: the exact post, the error-code table, the empty-post
credential check, and the webhook URL (the credential) kept out of every detail."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from homing.errors import InvalidCredentials
from homing.models import FailureClass
from homing.providers.base import ProviderFailure
from homing.providers.chat_base import OutgoingChat
from homing.vendors.slack.adapter import SlackProvider

URL = "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX"
MESSAGE = OutgoingChat(job_id="job_1", to="#alerts", text="*deploy* done", format="markdown")
Handler = Callable[[httpx.Request], httpx.Response]


def hook(handler: Handler, requests: list[httpx.Request]) -> SlackProvider:
    def record(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return handler(request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(record))
    return SlackProvider({"webhook_url": URL}, {}, http)


def plain(status: int, text: str, **headers: str) -> Handler:
    return lambda request: httpx.Response(status, text=text, headers=headers)


async def failure_of(handler: Handler) -> ProviderFailure:
    with pytest.raises(ProviderFailure) as raised:
        await hook(handler, []).send(MESSAGE)
    return raised.value


async def test_the_post_is_pinned() -> None:
    requests: list[httpx.Request] = []
    result = await hook(plain(200, "ok"), requests).send(MESSAGE)
    [request] = requests
    assert (request.method, str(request.url)) == ("POST", URL)
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == {"text": "*deploy* done", "mrkdwn": True}
    assert result.status_code == 200


def test_plain_text_turns_mrkdwn_off_and_html_is_refused() -> None:
    plain_message = OutgoingChat(job_id="j", to="#a", text="1 < 2", format="plain")
    assert SlackProvider.build_payload(plain_message) == {"text": "1 < 2", "mrkdwn": False}
    with pytest.raises(ProviderFailure) as raised:
        SlackProvider.build_payload(OutgoingChat(job_id="j", to="#a", text="x", format="html"))
    assert raised.value.failure_class is FailureClass.MESSAGE_PERMANENT


@pytest.mark.parametrize(
    ("status", "code", "failure_class"),
    [
        (400, "invalid_payload", FailureClass.MESSAGE_PERMANENT),
        (400, "missing_text_or_fallback_or_attachments", FailureClass.MESSAGE_PERMANENT),
        (400, "invalid_token", FailureClass.PROVIDER_PERMANENT),
        (400, "user_not_found", FailureClass.PROVIDER_PERMANENT),
        (403, "action_prohibited", FailureClass.PROVIDER_PERMANENT),
        (404, "channel_not_found", FailureClass.PROVIDER_PERMANENT),
        (404, "no_service", FailureClass.PROVIDER_PERMANENT),
        (410, "channel_is_archived", FailureClass.PROVIDER_PERMANENT),
        (500, "rollup_error", FailureClass.TRANSIENT),
        (503, "", FailureClass.TRANSIENT),
        (429, "rate_limited", FailureClass.THROTTLED),
        (418, "<html>teapot</html>", FailureClass.PROVIDER_PERMANENT),
    ],
)
async def test_classification_table(status: int, code: str, failure_class: FailureClass) -> None:
    failure = await failure_of(plain(status, code))
    assert failure.failure_class is failure_class
    assert failure.status_code == status


async def test_a_429_defers_by_retry_after() -> None:
    failure = await failure_of(plain(429, "rate_limited", **{"Retry-After": "30"}))
    assert failure.retry_after == 30.0


async def test_a_bogus_retry_after_is_bounded() -> None:
    failure = await failure_of(plain(429, "rate_limited", **{"Retry-After": "1" + "0" * 12}))
    assert failure.retry_after == 3600.0


async def test_credential_check_posts_an_empty_message() -> None:
    requests: list[httpx.Request] = []
    await hook(plain(400, "no_text"), requests).check_credentials()
    assert json.loads(requests[0].content) == {}
    with pytest.raises(InvalidCredentials) as raised:
        await hook(plain(404, "no_service"), []).check_credentials()
    assert URL not in str(raised.value) and "XXXXXXXX" not in str(raised.value)


async def test_an_echoed_url_and_a_huge_body_stay_out_of_the_detail() -> None:
    failure = await failure_of(plain(400, URL))
    assert URL not in failure.detail and "XXXXXXXX" not in failure.detail
    huge = await failure_of(plain(500, "e" * 1_000_000))
    assert len(huge.detail) < 100
    assert "XXXXXXXX" not in repr(hook(plain(200, "ok"), []))
