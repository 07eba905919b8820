"""Each email adapter puts an email's extra header fields in its vendor's own header
mechanism (the exact request), the batch senders per item, and SMTP in the message."""

from __future__ import annotations

import json
from email import message_from_bytes
from email.policy import default
from typing import Any
from urllib.parse import parse_qsl

import httpx

from homing.models import EmailContent
from homing.providers.base import OutgoingEmail
from homing.vendors.mailgun.adapter import MailgunProvider
from homing.vendors.postmark.adapter import PostmarkProvider
from homing.vendors.resend.adapter import ResendProvider
from homing.vendors.sendgrid.adapter import SendGridProvider
from homing.vendors.smtp.adapter import build_message
from tests.providers.replying import replying

UNSUBSCRIBE = "<https://example.test/u/abc>"
ONE_CLICK = "List-Unsubscribe=One-Click"
FIELDS = (("List-Unsubscribe", UNSUBSCRIBE), ("List-Unsubscribe-Post", ONE_CLICK))


def email(headers: tuple[tuple[str, str], ...] = FIELDS, n: int = 0) -> OutgoingEmail:
    content = EmailContent(
        to=f"ada{n}@example.com",
        from_="Acme <hello@acme.test>",
        subject="News",
        text="Hello",
        headers=headers,
    )
    return OutgoingEmail(job_id=f"job-{n}", content=content)


async def _request(
    adapter: type[Any], credentials: dict[str, str], reply: httpx.Response
) -> httpx.Request:
    async with replying(reply) as (http, requests):
        await adapter(credentials, {}, http).send(email())
    [request] = requests
    return request


async def test_sendgrid_sends_a_headers_object() -> None:
    reply = httpx.Response(202, headers={"X-Message-Id": "m"})
    request = await _request(SendGridProvider, {"api_key": "SG.k"}, reply)
    assert json.loads(request.content)["headers"] == dict(FIELDS)


async def test_resend_sends_a_headers_object() -> None:
    request = await _request(
        ResendProvider, {"api_key": "re_k"}, httpx.Response(200, json={"id": "i"})
    )
    assert json.loads(request.content)["headers"] == dict(FIELDS)


async def test_postmark_sends_a_headers_array_of_name_and_value() -> None:
    reply = httpx.Response(200, json={"MessageID": "m", "ErrorCode": 0})
    request = await _request(PostmarkProvider, {"api_key": "pm"}, reply)
    assert json.loads(request.content)["Headers"] == [
        {"Name": "List-Unsubscribe", "Value": UNSUBSCRIBE},
        {"Name": "List-Unsubscribe-Post", "Value": ONE_CLICK},
    ]


async def test_mailgun_sends_h_fields() -> None:
    credentials = {"api_key": "key-k", "domain": "mg.acme.test"}
    request = await _request(MailgunProvider, credentials, httpx.Response(200, json={"id": "<i>"}))
    form = parse_qsl(request.content.decode())
    assert [(k, v) for k, v in form if k.startswith("h:")] == [
        ("h:List-Unsubscribe", UNSUBSCRIBE),
        ("h:List-Unsubscribe-Post", ONE_CLICK),
    ]


async def test_an_email_without_header_fields_sends_no_header_field() -> None:
    async with replying(httpx.Response(200, json={"id": "i"})) as (http, requests):
        await ResendProvider({"api_key": "re_k"}, {}, http).send(email(()))
    assert "headers" not in json.loads(requests[0].content)


def test_smtp_puts_the_fields_in_the_message() -> None:
    message, _ = build_message(email())
    parsed = message_from_bytes(message.as_bytes(), policy=default)
    assert parsed["List-Unsubscribe"] == UNSUBSCRIBE
    assert parsed["List-Unsubscribe-Post"] == ONE_CLICK


async def test_resend_batch_carries_each_items_own_fields() -> None:
    emails = [email(n=0), email((("X-Campaign", "spring"),), n=1), email((), n=2)]
    ids = {"data": [{"id": f"i{n}"} for n in range(3)]}
    async with replying(httpx.Response(200, json=ids)) as (http, requests):
        await ResendProvider({"api_key": "re_k"}, {}, http).send_batch(emails)
    body = json.loads(requests[0].content)
    assert [item.get("headers") for item in body] == [dict(FIELDS), {"X-Campaign": "spring"}, None]


async def test_postmark_batch_carries_each_items_own_fields() -> None:
    emails = [email(n=0), email((), n=1)]
    answer = [{"ErrorCode": 0, "MessageID": f"m{n}"} for n in range(2)]
    async with replying(httpx.Response(200, json=answer)) as (http, requests):
        await PostmarkProvider({"api_key": "pm"}, {}, http).send_batch(emails)
    body = json.loads(requests[0].content)
    assert [len(item.get("Headers", [])) for item in body] == [2, 0]


def test_smtp_sends_a_long_field_on_one_line_never_encoded() -> None:
    # An unbreakable URL longer than 78 characters: folding would need encoded words.
    value = "<https://example.test/u/" + "a" * 800 + ">"
    message, _ = build_message(email((("List-Unsubscribe", value),)))
    wire = message.as_bytes()
    assert f"List-Unsubscribe: {value}\r\n".encode() in wire
    assert b"=?utf-8?" not in wire
    assert max(len(line) for line in wire.split(b"\r\n")) <= 998
