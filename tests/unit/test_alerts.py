"""The one operator alerter: every kind of alert logged at once, batched to Slack."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from homing.alerts import Alerter, DeadLetterAlert

SLACK = "https://hooks.slack.invalid/services/T0/B0/x"


def _alerter(posts: list[str]) -> tuple[Alerter, httpx.AsyncClient]:
    def answer(request: httpx.Request) -> httpx.Response:
        posts.append(json.loads(request.content)["text"])
        return httpx.Response(200)

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    return Alerter(http, SLACK, batch_seconds=3600), http


async def test_alerts_of_every_kind_in_one_window_are_one_counted_slack_message() -> None:
    posts: list[str] = []
    alerter, http = _alerter(posts)
    for i in range(7):
        alerter.dead_letter(DeadLetterAlert(f"job_{i}", "transient", "HTTP 503"))
    alerter.conflict("resend", "pa_1", "msg_same")
    alerter.provider_failed("postmark", "job_9", "dropped")
    alerter.provider_failed("sendgrid", "job_10", "dropped")
    await alerter.aclose()
    await http.aclose()
    [text] = posts
    assert "dead-lettered 7 jobs" in text and "… and 2 more" in text
    assert "1 inbound event again with a different body" in text and "msg_same" in text
    assert "2 accepted messages not sent" in text and "job_10" in text


async def test_without_a_slack_url_alerts_are_only_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    http = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: pytest.fail("posted")))
    alerter = Alerter(http, None, batch_seconds=0)
    with caplog.at_level(logging.WARNING):
        alerter.dead_letter(DeadLetterAlert("job_1", "transient", "HTTP 503"))
        alerter.conflict("resend", "pa_1", "msg_same")
    await alerter.aclose()
    await http.aclose()
    loggers = {record.name for record in caplog.records}
    assert loggers == {"homing.alerts", "homing.inbound"}
