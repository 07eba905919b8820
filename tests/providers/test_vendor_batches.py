"""``send_batch`` of the SendGrid and Mailgun adapters: the requests a batch leaves in,
and one outcome per message although the vendor answers each request once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs

import httpx

from homing.models import EmailContent, FailureClass
from homing.providers import one_answer
from homing.providers.base import OutgoingEmail, ProviderFailure, SendResult
from homing.vendors.mailgun.adapter import MailgunProvider
from homing.vendors.sendgrid.adapter import SUBSTITUTION_BYTES, SendGridProvider

KEY = "SG.secret_key_123"
MG = {"api_key": "key-secret", "domain": "mg.acme.test"}


def email(n: int, to: str | None = None, **content: Any) -> OutgoingEmail:
    fields: dict[str, Any] = {"subject": f"Subject {n}", "text": f"Text {n}", **content}
    return OutgoingEmail(
        job_id=f"job-{n}",
        content=EmailContent(to=to or f"user{n}@example.com", from_="Acme <a@acme.test>", **fields),
    )


@asynccontextmanager
async def answering(
    answer: Callable[[httpx.Request], httpx.Response],
) -> AsyncIterator[tuple[httpx.AsyncClient, list[httpx.Request]]]:
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return answer(request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        yield http, requests


def accepted(request: httpx.Request) -> httpx.Response:
    return httpx.Response(202, headers={"X-Message-Id": f"sg-{len(request.content)}"})


async def test_sendgrid_sends_one_personalization_per_email_with_its_own_fields() -> None:
    emails = [email(n, headers=(("X-Order", str(n)),)) for n in range(3)]
    async with answering(accepted) as (http, requests):
        outcomes = await SendGridProvider({"api_key": KEY}, {}, http).send_batch(emails)
    (request,) = requests
    body = json.loads(request.content)
    tags = [block["value"] for block in body["content"]]
    assert [block["type"] for block in body["content"]] == ["text/plain"]
    for n, item in enumerate(body["personalizations"]):
        assert item["to"] == [{"email": f"user{n}@example.com"}]
        assert item["subject"] == f"Subject {n}"
        assert item["custom_args"] == {"hjid": f"job-{n}"}
        assert item["headers"] == {"X-Order": str(n)}
        assert item["substitutions"] == {tags[0]: f"Text {n}"}
    ids = {o.provider_message_id for o in outcomes if isinstance(o, SendResult)}
    assert len(ids) == 1 and len(outcomes) == 3


async def test_sendgrid_emails_with_one_body_carry_it_as_content_not_substitutions() -> None:
    emails = [email(n, text="Same", html="<p>Same</p>") for n in range(4)]
    async with answering(accepted) as (http, requests):
        await SendGridProvider({"api_key": KEY}, {}, http).send_batch(emails)
    body = json.loads(requests[0].content)
    assert body["content"] == [
        {"type": "text/plain", "value": "Same"},
        {"type": "text/html", "value": "<p>Same</p>"},
    ]
    assert all("substitutions" not in item for item in body["personalizations"])


def jobs_of(body: dict[str, Any]) -> list[str]:
    message = body.get("custom_args", {})
    return [{**message, **p.get("custom_args", {})}["hjid"] for p in body["personalizations"]]


async def test_sendgrid_splits_what_one_request_cannot_express() -> None:
    big = "x" * SUBSTITUTION_BYTES
    emails = [
        email(0),
        email(1, to="Other <user1@example.com>"),
        email(2, html="<p>2</p>"),  # another set of parts
        email(3, text=big),  # bodies beyond the substitution limit
        email(4, to="user0@example.com"),  # an address already in the first request
    ]
    async with answering(accepted) as (http, requests):
        outcomes = await SendGridProvider({"api_key": KEY}, {}, http).send_batch(emails)
    # A request of one email is the single send: its hjid is the message's custom arg.
    carried = [jobs_of(json.loads(r.content)) for r in requests]
    assert sorted(carried) == [["job-0", "job-1"], ["job-2"], ["job-3"], ["job-4"]]
    big_request = next(r for r in requests if b"job-3" in r.content)
    assert json.loads(big_request.content)["content"][0]["value"] == big
    assert all(isinstance(o, SendResult) for o in outcomes)


async def test_a_sendgrid_400_for_the_request_sends_each_email_alone() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bad = any(p["to"][0]["email"] == "bad@example.com" for p in body["personalizations"])
        if bad:
            return httpx.Response(400, json={"errors": [{"message": KEY, "field": None}]})
        return accepted(request)

    emails = [email(0), email(1, to="bad@example.com"), email(2)]
    async with answering(answer) as (http, requests):
        outcomes = await SendGridProvider({"api_key": KEY}, {}, http).send_batch(emails)
    assert len(requests) == 1 + 3
    first, second, third = outcomes
    assert isinstance(first, SendResult) and isinstance(third, SendResult)
    assert isinstance(second, ProviderFailure)
    assert second.failure_class is FailureClass.MESSAGE_PERMANENT
    assert KEY not in second.detail


async def test_a_sendgrid_throttle_is_the_same_failure_for_every_email_and_one_call() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, json={"errors": [{"message": "too many requests"}]})

    async with answering(answer) as (http, requests):
        outcomes = await SendGridProvider({"api_key": KEY}, {}, http).send_batch(
            [email(n) for n in range(5)]
        )
    assert len(requests) == 1
    assert all(
        isinstance(o, ProviderFailure) and o.failure_class is FailureClass.THROTTLED
        for o in outcomes
    )


def mailgun_ok(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"id": "<1.2@mg.acme.test>", "message": "Queued. Thank you."})


def form(request: httpx.Request) -> dict[str, list[str]]:
    return parse_qs(request.content.decode(), keep_blank_values=True)


async def test_mailgun_sends_recipient_variables_and_the_job_id_per_recipient() -> None:
    emails = [email(n, text="Same body") for n in range(3)]
    async with answering(mailgun_ok) as (http, requests):
        outcomes = await MailgunProvider(MG, {}, http).send_batch(emails)
    (request,) = requests
    fields = form(request)
    assert fields["to"] == [f"user{n}@example.com" for n in range(3)]
    assert fields["v:hjid"] == ["%recipient.hjid%"]
    assert fields["subject"] == ["%recipient.subject%"]
    assert fields["text"] == ["Same body"]
    variables = json.loads(fields["recipient-variables"][0])
    assert variables["user1@example.com"] == {"hjid": "job-1", "subject": "Subject 1"}
    assert [o.provider_message_id for o in outcomes if isinstance(o, SendResult)] == [
        "<1.2@mg.acme.test>"
    ] * 3


async def test_mailgun_never_substitutes_into_content_that_names_a_recipient_variable() -> None:
    emails = [
        email(0, text="Same body"),
        email(1, text="Same body", subject="Hi %recipient.hjid%"),
        email(2, text="Another body"),
    ]
    async with answering(mailgun_ok) as (http, requests):
        await MailgunProvider(MG, {}, http).send_batch(emails)
    assert len(requests) == 3
    alone = next(r for r in requests if "job-1" in r.content.decode())
    fields = form(alone)
    assert fields["subject"] == ["Hi %recipient.hjid%"]
    assert "recipient-variables" not in fields and fields["v:hjid"] == ["job-1"]


async def test_a_mailgun_400_for_the_request_sends_each_alone_and_401_fails_all() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        if "recipient-variables" in form(request):
            return httpx.Response(400, json={"message": "to parameter is not a valid address"})
        return mailgun_ok(request)

    emails = [email(n, text="Same body") for n in range(4)]
    async with answering(refuse) as (http, requests):
        outcomes = await MailgunProvider(MG, {}, http).send_batch(emails)
    assert len(requests) == 1 + 4
    assert all(isinstance(o, SendResult) for o in outcomes)

    def forbidden(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, text="Forbidden")

    async with answering(forbidden) as (http, requests):
        outcomes = await MailgunProvider(MG, {}, http).send_batch(emails)
    assert len(requests) == 1
    assert all(
        isinstance(o, ProviderFailure) and o.failure_class is FailureClass.PROVIDER_PERMANENT
        for o in outcomes
    )


def test_plan_puts_the_nth_repeat_of_an_address_in_the_nth_request_and_keeps_limits() -> None:
    emails = [email(n, to="same@example.com") for n in range(3)]
    emails += [email(n) for n in range(3, 8)]
    requests = one_answer.plan(emails, lambda e: "k", lambda e: e.content.to, limit=2)
    assert all(len(r) <= 2 for r in requests)
    assert sorted(i for r in requests for i in r) == list(range(8))
    for request in requests:
        tos = [emails[i].content.to for i in request]
        assert len(tos) == len(set(tos))


async def test_a_batch_split_into_many_requests_sends_a_few_at_once() -> None:
    in_flight, peak = 0, 0
    all_in = asyncio.Event()

    async def handler(request: httpx.Request) -> httpx.Response:
        # The first requests wait until the limit's worth are in flight together: sent
        # one at a time, they would never be (and the wait would fail the test).
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if in_flight == one_answer.REQUEST_CONCURRENCY:
            all_in.set()
        await asyncio.wait_for(all_in.wait(), timeout=5)
        in_flight -= 1
        return mailgun_ok(request)

    # Bodies of their own: twelve Mailgun requests of one message each.
    emails = [email(n) for n in range(12)]
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        outcomes = await MailgunProvider(MG, {}, http).send_batch(emails)
    assert all(isinstance(o, SendResult) for o in outcomes)
    assert peak == one_answer.REQUEST_CONCURRENCY
