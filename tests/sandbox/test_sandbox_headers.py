"""The header fields each email vendor's sandbox reads, in the shape the vendor documents
(sent by its official SDK where there is one), its documented refusals, and the
``headers`` of ``GET /_sandbox/messages``; SMTP records every field as it arrived."""

from __future__ import annotations

import asyncio
import json
from email.message import EmailMessage
from typing import Any

import aiosmtplib
import httpx
import pytest
import resend
from mailgun.client import Client as MailgunClient
from python_http_client.exceptions import BadRequestsError
from sendgrid import SendGridAPIClient
from sendgrid.helpers.mail import Header, Mail

from homing.sandbox import SandboxServer

TO = "ada@example.com"
SENDER = "noreply@acme.test"
UNSUBSCRIBE = "<https://example.test/u/abc>"
ONE_CLICK = "List-Unsubscribe=One-Click"
RFC_8058 = [["List-Unsubscribe", UNSUBSCRIBE], ["List-Unsubscribe-Post", ONE_CLICK]]


async def listed(sandbox: SandboxServer, provider: str) -> list[dict[str, Any]]:
    """``GET /_sandbox/messages?provider=…`` over HTTP, as a test reads it."""
    async with httpx.AsyncClient(base_url=sandbox.base_url) as http:
        response = await http.get("/_sandbox/messages", params={"provider": provider})
    assert response.status_code == 200
    messages: list[dict[str, Any]] = response.json()
    return messages


def _sendgrid(sandbox: SandboxServer) -> SendGridAPIClient:
    return SendGridAPIClient("SG.sandbox-key", host=sandbox.provider_base_url("sendgrid"))


async def test_sendgrid_sdk_headers_are_recorded(guarded_sandbox: SandboxServer) -> None:
    mail = Mail(from_email=SENDER, to_emails=TO, subject="Hi", plain_text_content="Hello")
    mail.header = [
        Header("List-Unsubscribe", UNSUBSCRIBE),
        Header("List-Unsubscribe-Post", ONE_CLICK),
    ]
    assert mail.get()["headers"] == dict(RFC_8058)  # the SDK's wire shape: one object
    response = await asyncio.to_thread(_sendgrid(guarded_sandbox).send, mail)
    assert response.status_code == 202
    [message] = await listed(guarded_sandbox, "sendgrid")
    assert sorted(message["headers"]) == RFC_8058  # an object: the order is the SDK's


async def test_sendgrid_personalization_headers_win_over_the_message_ones(
    guarded_sandbox: SandboxServer,
) -> None:
    mail = Mail(from_email=SENDER, to_emails=TO, subject="Hi", plain_text_content="Hello")
    mail.header = Header("X-Campaign", "spring")
    mail.header = Header("x-campaign", "summer", p=0)
    await asyncio.to_thread(_sendgrid(guarded_sandbox).send, mail)
    [message] = await listed(guarded_sandbox, "sendgrid")
    assert message["headers"] == [["x-campaign", "summer"]]


SENDGRID_BODY: dict[str, Any] = {
    "personalizations": [{"to": [{"email": TO}]}],
    "from": {"email": SENDER},
    "subject": "Hi",
    "content": [{"type": "text/plain", "value": "Hello"}],
}


@pytest.mark.parametrize(
    ("raw_headers", "message"),
    [
        ('{"Reply-To": "a@b.test"}', "Header can not be one of the reserved keys."),
        ('{"dkim-signature": "v=1"}', "Header can not be one of the reserved keys."),
        ('{"X-Count": 3}', "The header values must be strings."),
        ('{"X A": "1"}', "Header keys cannot contain non-ASCII characters and empty spaces."),
        ('{"X-Ä": "1"}', "Header keys cannot contain non-ASCII characters and empty spaces."),
        ('{"X-A": "1", "X-A": "2"}', "The headers cannot contain duplicate keys."),
    ],
)
async def test_sendgrid_refuses_what_its_errors_page_lists(
    guarded_sandbox: SandboxServer, raw_headers: str, message: str
) -> None:
    # Raw JSON, so a repeated key reaches the sandbox as SendGrid would receive it.
    body = json.dumps(SENDGRID_BODY)[:-1] + f', "headers": {raw_headers}}}'
    base = guarded_sandbox.provider_base_url("sendgrid")
    async with httpx.AsyncClient(base_url=base) as http:
        response = await http.post(
            "/v3/mail/send",
            content=body.encode(),
            headers={"Authorization": "Bearer SG.key", "Content-Type": "application/json"},
        )
    assert response.status_code == 400
    assert {"message": message, "field": "headers", "help": None} in response.json()["errors"]
    assert await listed(guarded_sandbox, "sendgrid") == []


async def test_sendgrid_sdk_reads_a_reserved_header_refusal(
    guarded_sandbox: SandboxServer,
) -> None:
    mail = Mail(from_email=SENDER, to_emails=TO, subject="Hi", plain_text_content="Hello")
    mail.header = Header("Subject", "again")
    with pytest.raises(BadRequestsError):
        await asyncio.to_thread(_sendgrid(guarded_sandbox).send, mail)


@pytest.fixture
def resend_sdk(guarded_sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resend, "api_key", "re_sandbox_key")
    monkeypatch.setattr(resend, "api_url", guarded_sandbox.provider_base_url("resend"))


@pytest.mark.usefixtures("resend_sdk")
async def test_resend_sdk_headers_are_recorded_alone_and_in_a_batch(
    guarded_sandbox: SandboxServer,
) -> None:
    params: resend.Emails.SendParams = {
        "from": SENDER,
        "to": [TO],
        "subject": "Hi",
        "text": "Hello",
        "headers": dict(RFC_8058),
    }
    await asyncio.to_thread(resend.Emails.send, params)
    plain: resend.Emails.SendParams = {"from": SENDER, "to": [TO], "subject": "Hi", "text": "x"}
    await asyncio.to_thread(resend.Batch.send, [params, plain])
    messages = await listed(guarded_sandbox, "resend")
    assert [message["headers"] for message in messages] == [RFC_8058, RFC_8058, []]


@pytest.mark.usefixtures("resend_sdk")
async def test_resend_refuses_headers_that_are_not_strings() -> None:
    params: Any = {"from": SENDER, "to": [TO], "subject": "Hi", "text": "x", "headers": {"X": 1}}
    with pytest.raises(resend.exceptions.ResendError):
        await asyncio.to_thread(resend.Emails.send, params)


def _mailgun(sandbox: SandboxServer) -> MailgunClient:
    return MailgunClient(auth=("api", "key-sandbox"), api_url=sandbox.provider_base_url("mailgun"))


async def test_mailgun_sdk_h_fields_are_recorded(guarded_sandbox: SandboxServer) -> None:
    data = {
        "from": SENDER,
        "to": TO,
        "subject": "Hi",
        "text": "Hello",
        "v:hjid": "job-1",
        "h:List-Unsubscribe": UNSUBSCRIBE,
        "h:List-Unsubscribe-Post": ONE_CLICK,
    }
    response = await asyncio.to_thread(
        _mailgun(guarded_sandbox).messages.create, data=data, domain="sandbox.homing.test"
    )
    assert response.status_code == 200, response.text
    [message] = await listed(guarded_sandbox, "mailgun")
    assert message["headers"] == RFC_8058


async def test_mailgun_refuses_more_than_16_kb_of_options(guarded_sandbox: SandboxServer) -> None:
    data = {"from": SENDER, "to": TO, "subject": "Hi", "text": "Hello", "h:X-Big": "x" * 16_384}
    response = await asyncio.to_thread(
        _mailgun(guarded_sandbox).messages.create, data=data, domain="sandbox.homing.test"
    )
    assert response.status_code == 400
    assert "16kB" in response.json()["message"]
    assert await listed(guarded_sandbox, "mailgun") == []


POSTMARK_HEADERS = {
    "Accept": "application/json",
    "Content-Type": "application/json",
    "X-Postmark-Server-Token": "server-token",
}


def _postmark_body(headers: Any) -> dict[str, Any]:
    return {"From": SENDER, "To": TO, "Subject": "Hi", "TextBody": "Hello", "Headers": headers}


async def test_postmark_headers_array_is_recorded_alone_and_in_a_batch(
    guarded_sandbox: SandboxServer,
) -> None:
    # postmarkapp.com/developer/api/email-api: "Headers": [{"Name", "Value"}].
    headers = [{"Name": name, "Value": value} for name, value in RFC_8058]
    base = guarded_sandbox.provider_base_url("postmark")
    async with httpx.AsyncClient(base_url=base, headers=POSTMARK_HEADERS) as http:
        single = await http.post("/email", content=json.dumps(_postmark_body(headers)))
        batch = [_postmark_body(headers), _postmark_body([])]
        several = await http.post("/email/batch", content=json.dumps(batch))
    assert single.json()["ErrorCode"] == 0
    assert [item["ErrorCode"] for item in several.json()] == [0, 0]
    messages = await listed(guarded_sandbox, "postmark")
    assert [message["headers"] for message in messages] == [RFC_8058, RFC_8058, []]


@pytest.mark.parametrize(
    "headers", [{"List-Unsubscribe": UNSUBSCRIBE}, [{"Name": "X"}], [{"Name": "", "Value": "v"}]]
)
async def test_postmark_refuses_headers_not_in_its_shape(
    guarded_sandbox: SandboxServer, headers: Any
) -> None:
    base = guarded_sandbox.provider_base_url("postmark")
    async with httpx.AsyncClient(base_url=base, headers=POSTMARK_HEADERS) as http:
        response = await http.post("/email", content=json.dumps(_postmark_body(headers)))
    assert (response.status_code, response.json()["ErrorCode"]) == (422, 403)
    assert await listed(guarded_sandbox, "postmark") == []


async def test_smtp_records_every_header_field_as_it_arrived(sandbox: SandboxServer) -> None:
    mail = EmailMessage()
    mail["From"] = SENDER
    mail["To"] = TO
    mail["Subject"] = "Hi"
    mail["List-Unsubscribe"] = UNSUBSCRIBE
    mail["List-Unsubscribe-Post"] = ONE_CLICK
    mail["X-Long"] = " ".join(["word"] * 40)  # folded on the wire, unfolded in the record
    mail.set_content("Hello")
    assert sandbox.smtp_port is not None
    smtp = aiosmtplib.SMTP(hostname="127.0.0.1", port=sandbox.smtp_port, start_tls=False)
    async with smtp:
        await smtp.login("user", "secret")
        await smtp.send_message(mail)
    [message] = await listed(sandbox, "smtp")
    fields = message["headers"]
    assert [name for name, _ in fields][:3] == ["From", "To", "Subject"]
    assert ["List-Unsubscribe", UNSUBSCRIBE] in fields
    assert ["List-Unsubscribe-Post", ONE_CLICK] in fields
    assert ["X-Long", " ".join(["word"] * 40)] in fields


async def test_a_postmark_batch_message_with_bad_headers_fails_alone(
    guarded_sandbox: SandboxServer,
) -> None:
    batch = [_postmark_body({"X": "y"}), _postmark_body([{"Name": "X-A", "Value": "1"}])]
    base = guarded_sandbox.provider_base_url("postmark")
    async with httpx.AsyncClient(base_url=base, headers=POSTMARK_HEADERS) as http:
        answer = await http.post("/email/batch", content=json.dumps(batch))
    assert [item["ErrorCode"] for item in answer.json()] == [403, 0]
    [message] = await listed(guarded_sandbox, "postmark")
    assert message["headers"] == [["X-A", "1"]]


@pytest.mark.usefixtures("resend_sdk")
async def test_a_resend_strict_batch_with_bad_headers_sends_nothing(
    guarded_sandbox: SandboxServer,
) -> None:
    good: Any = {"from": SENDER, "to": [TO], "subject": "Hi", "text": "x"}
    bad: Any = {**good, "headers": ["List-Unsubscribe", UNSUBSCRIBE]}
    with pytest.raises(resend.exceptions.ResendError):
        await asyncio.to_thread(resend.Batch.send, [good, bad])
    assert await listed(guarded_sandbox, "resend") == []
