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


async def test_fired_and_resolved_conditions_are_one_batch_to_slack_and_email() -> None:
    posts: list[str] = []
    emails: list[tuple[str, str]] = []
    alerter, http = _alerter(posts)

    async def email(subject: str, text: str) -> None:
        emails.append((subject, text))

    alerter.email_with(email)
    alerter.fire("queue_not_draining:notifications-email", "oldest 900s\nold")
    alerter.fire("provider_failing:resend", "20 of 20 calls failed")
    alerter.resolve("inbound_lag", "was: p95 700s")
    await alerter.aclose()
    await http.aclose()
    [text] = posts
    assert "alerts firing (2)" in text and "alert resolved (1)" in text
    assert "queue_not_draining:notifications-email: oldest 900s old" in text  # one line
    [(subject, body)] = emails
    assert subject == "Homing alerts firing (2):" and body == text


async def test_the_platform_tenants_dead_letters_stay_out_of_the_alert_email() -> None:
    posts: list[str] = []
    emails: list[str] = []
    alerter, http = _alerter(posts)

    async def email(subject: str, text: str) -> None:
        emails.append(text)

    alerter.email_with(email, quiet_tenant="platform")
    alerter.dead_letter(DeadLetterAlert("job_p", "transient", "HTTP 503", tenant_id="platform"))
    await alerter.flush()
    assert emails == [] and "job_p" in posts[0]
    alerter.dead_letter(DeadLetterAlert("job_t", "transient", "HTTP 503", tenant_id="acme"))
    await alerter.aclose()
    await http.aclose()
    assert len(emails) == 1 and "job_t" in emails[0]


async def test_a_reconciler_report_fires_and_a_clean_run_resolves_it_once() -> None:
    posts: list[str] = []
    alerter, http = _alerter(posts)
    alerter.report("unaccounted_jobs", 3, ["j1", "j2"])
    await alerter.flush()
    alerter.report("unaccounted_jobs", 0)
    alerter.report("unaccounted_jobs", 0)
    await alerter.aclose()
    await http.aclose()
    firing, resolved = posts
    assert "reconciler:unaccounted_jobs: 3 found (j1, j2)" in firing
    assert "alert resolved (1)" in resolved and "reconciler:unaccounted_jobs" in resolved


async def test_an_email_sender_that_raises_does_not_stop_slack() -> None:
    posts: list[str] = []
    alerter, http = _alerter(posts)

    async def broken(subject: str, text: str) -> None:
        raise RuntimeError("smtp down")

    alerter.email_with(broken)
    alerter.fire("dead_letter_spike", "60 jobs")
    await alerter.aclose()
    await http.aclose()
    assert len(posts) == 1
