"""The sandbox driven by the email vendors' official Python SDKs (sendgrid 6, resend 2,
mailgun 1), and Postmark by its documented API (it publishes no Python SDK): each call
Homing's adapters make (send, credential check, domains), and the SDK's parsed answer.

The SDKs are synchronous, so each call runs in a thread beside the sandbox's loop.
Base URLs: ``SendGridAPIClient(host=…)`` (sendgrid/base_interface.py),
``resend.api_url`` (resend/__init__.py), ``Client(api_url=…)`` (mailgun/client.py).
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import resend
from mailgun.client import Client as MailgunClient
from python_http_client.exceptions import UnauthorizedError
from sendgrid import SendGridAPIClient
from sendgrid.helpers.mail import CustomArg, Mail

from homing.sandbox import SandboxServer

TO = "ada@example.com"
SENDER = "noreply@acme.test"


def _sendgrid(sandbox: SandboxServer, key: str = "SG.sandbox-key") -> SendGridAPIClient:
    return SendGridAPIClient(key, host=sandbox.provider_base_url("sendgrid"))


async def test_sendgrid_sdk_sends_and_reads_the_message_id(
    guarded_sandbox: SandboxServer,
) -> None:
    mail = Mail(from_email=SENDER, to_emails=TO, subject="Hi", plain_text_content="Hello")
    mail.add_custom_arg(CustomArg("hjid", "job-1"))
    response = await asyncio.to_thread(_sendgrid(guarded_sandbox).send, mail)
    assert response.status_code == 202
    [recorded] = guarded_sandbox.state.recorder.messages("sendgrid")
    assert recorded.message_id == response.headers["X-Message-Id"]
    assert (recorded.to, recorded.subject, recorded.text) == ((TO,), "Hi", "Hello")
    assert recorded.job_id == "job-1"


async def test_sendgrid_sdk_reads_scopes_domains_and_a_refusal(
    guarded_sandbox: SandboxServer,
) -> None:
    client = _sendgrid(guarded_sandbox).client
    scopes = await asyncio.to_thread(client.scopes.get)
    assert "mail.send" in scopes.to_dict["scopes"]
    body = {"domain": "acme.test", "automatic_security": True}
    created = await asyncio.to_thread(client.whitelabel.domains.post, request_body=body)
    domain = created.to_dict
    assert (created.status_code, domain["valid"]) == (201, False)
    assert set(domain["dns"]) == {"mail_cname", "dkim1", "dkim2"}
    validated = await asyncio.to_thread(client.whitelabel.domains._(domain["id"]).validate.post)
    assert validated.to_dict["valid"] is True
    refused = _sendgrid(guarded_sandbox, "SG.invalid").client.scopes.get
    with pytest.raises(UnauthorizedError):
        await asyncio.to_thread(refused)


@pytest.fixture
def resend_sdk(guarded_sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resend, "api_key", "re_sandbox_key")
    monkeypatch.setattr(resend, "api_url", guarded_sandbox.provider_base_url("resend"))


@pytest.mark.usefixtures("resend_sdk")
async def test_resend_sdk_sends_lists_and_verifies_domains(
    guarded_sandbox: SandboxServer,
) -> None:
    params: resend.Emails.SendParams = {
        "from": SENDER,
        "to": [TO],
        "subject": "Hi",
        "text": "Hello",
        "tags": [{"name": "hjid", "value": "job-1"}],
    }
    # Homing sends an Idempotency-Key with each job: a retry replays the answer.
    options: resend.Emails.SendOptions = {"idempotency_key": "job-1"}
    sent = await asyncio.to_thread(resend.Emails.send, params, options)
    again = await asyncio.to_thread(resend.Emails.send, params, options)
    assert again["id"] == sent["id"]
    [recorded] = guarded_sandbox.state.recorder.messages("resend")
    assert (recorded.message_id, recorded.job_id) == (sent["id"], "job-1")
    assert recorded.idempotency_key == "job-1"
    listed = await asyncio.to_thread(resend.Domains.list)
    assert listed["data"] == []
    created = await asyncio.to_thread(resend.Domains.create, {"name": "acme.test"})
    assert created["status"] == "not_started" and created["records"]
    await asyncio.to_thread(resend.Domains.verify, created["id"])
    read = await asyncio.to_thread(resend.Domains.get, created["id"])
    assert read["name"] == "acme.test"


@pytest.mark.usefixtures("resend_sdk")
async def test_resend_sdk_sends_a_batch_strict_and_permissive(
    guarded_sandbox: SandboxServer,
) -> None:
    good: resend.Emails.SendParams = {"from": SENDER, "to": [TO], "subject": "Hi", "text": "x"}
    bad: resend.Emails.SendParams = {**good, "to": []}
    sent = await asyncio.to_thread(resend.Batch.send, [good, good], {"idempotency_key": "b-1"})
    assert len(sent["data"]) == 2 and all(item["id"] for item in sent["data"])
    with pytest.raises(resend.exceptions.ResendError):
        await asyncio.to_thread(resend.Batch.send, [good, bad])
    loose = await asyncio.to_thread(
        resend.Batch.send, [good, bad], {"batch_validation": "permissive"}
    )
    assert len(loose["data"]) == 1
    assert [error["index"] for error in loose["errors"]] == [1]
    assert len(guarded_sandbox.state.recorder.messages("resend")) == 3


@pytest.mark.usefixtures("resend_sdk")
async def test_resend_sdk_reads_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resend, "api_key", "re_invalid_key")
    with pytest.raises(resend.exceptions.ValidationError) as info:
        await asyncio.to_thread(resend.Domains.list)
    assert (info.value.code, info.value.message) == (400, "API key is invalid")


def _mailgun(sandbox: SandboxServer, key: str = "key-sandbox") -> MailgunClient:
    return MailgunClient(auth=("api", key), api_url=sandbox.provider_base_url("mailgun"))


async def test_mailgun_sdk_sends_a_form_and_reads_the_id(guarded_sandbox: SandboxServer) -> None:
    data = {"from": SENDER, "to": TO, "subject": "Hi", "text": "Hello", "v:hjid": "job-1"}
    client = _mailgun(guarded_sandbox)
    response = await asyncio.to_thread(
        client.messages.create, data=data, domain="sandbox.homing.test"
    )
    assert response.status_code == 200, response.text
    [recorded] = guarded_sandbox.state.recorder.messages("mailgun")
    assert (recorded.message_id, recorded.job_id) == (response.json()["id"], "job-1")


async def test_mailgun_sdk_reads_domains_and_a_refusal(guarded_sandbox: SandboxServer) -> None:
    client = _mailgun(guarded_sandbox)
    listed = await asyncio.to_thread(client.domains.get)
    assert listed.status_code == 200 and listed.json()["items"]
    created = await asyncio.to_thread(client.domains.create, data={"name": "acme.test"})
    assert created.status_code == 200, created.text
    assert created.json()["domain"]["state"] == "unverified"
    verified = await asyncio.to_thread(client.domains.put, domain="acme.test", verify=True)
    assert verified.status_code == 200, verified.text
    read = await asyncio.to_thread(client.domains.get, domain_name="acme.test")
    assert read.json()["domain"]["name"] == "acme.test"
    refused = await asyncio.to_thread(_mailgun(guarded_sandbox, "key-invalid").domains.get)
    assert refused.status_code == 401


async def test_postmark_as_its_api_reference_documents_it(guarded_sandbox: SandboxServer) -> None:
    # postmarkapp.com/developer/api/email-api#send-a-single-email: the request's headers
    # and the answer's fields; /developer/api/server-api#get-server for the check.
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "X-Postmark-Server-Token": "server-token",
    }
    body = {
        "From": SENDER,
        "To": TO,
        "Subject": "Hi",
        "TextBody": "Hello",
        "MessageStream": "outbound",
        "Metadata": {"hjid": "job-1"},
    }
    base = guarded_sandbox.provider_base_url("postmark")
    async with httpx.AsyncClient(base_url=base) as http:
        sent = await http.post("/email", content=json.dumps(body), headers=headers)
        server = await http.get("/server", headers=headers)
    answer = sent.json()
    assert set(answer) == {"To", "SubmittedAt", "MessageID", "ErrorCode", "Message"}
    assert (answer["To"], answer["ErrorCode"], answer["Message"]) == (TO, 0, "OK")
    [recorded] = guarded_sandbox.state.recorder.messages("postmark")
    assert (recorded.message_id, recorded.job_id) == (answer["MessageID"], "job-1")
    assert server.status_code == 200 and server.json()["Name"]
