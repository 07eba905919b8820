"""The SMTP sink over real SMTP: AUTH, recording, and fault codes at RCPT and DATA."""

from __future__ import annotations

import asyncio
import time
from email.message import EmailMessage

import aiosmtplib
import pytest

from homing.sandbox import FaultMode, FaultRule, SandboxServer


def message(job_id: str = "job-smtp-1") -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = "Acme <hello@acme.example>"
    mail["To"] = "ada@example.com"
    mail["Subject"] = "Welcome"
    mail["Message-ID"] = f"<{job_id}@acme.example>"
    mail["X-Homing-Job-Id"] = job_id
    mail.set_content("Hello Ada")
    mail.add_alternative("<p>Hello Ada</p>", subtype="html")
    return mail


def client(sandbox: SandboxServer, timeout: float = 5.0) -> aiosmtplib.SMTP:
    assert sandbox.smtp_port is not None
    return aiosmtplib.SMTP(
        hostname="127.0.0.1", port=sandbox.smtp_port, timeout=timeout, start_tls=False
    )


async def send(sandbox: SandboxServer, *, timeout: float = 5.0) -> None:
    async with client(sandbox, timeout) as smtp:
        await smtp.login("user", "secret")
        await smtp.send_message(message())


@pytest.mark.parametrize("mechanism", ["plain", "login"])
async def test_authenticated_message_is_recorded(sandbox: SandboxServer, mechanism: str) -> None:
    async with client(sandbox) as smtp:
        await smtp.ehlo()
        login = smtp.auth_plain if mechanism == "plain" else smtp.auth_login
        await login("user", "secret")
        _, reply = await smtp.send_message(message())
    assert "<job-smtp-1@acme.example>" in reply
    [record] = sandbox.state.messages("smtp")
    assert record.to == ("ada@example.com",)
    assert record.sender == "hello@acme.example"
    assert (record.subject, record.job_id) == ("Welcome", "job-smtp-1")
    assert record.text is not None and record.text.strip() == "Hello Ada"
    assert record.html is not None and "<p>Hello Ada</p>" in record.html


@pytest.mark.parametrize(("user", "password"), [("invalid-user", "secret"), ("user", "invalid")])
async def test_credentials_containing_invalid_get_535(
    sandbox: SandboxServer, user: str, password: str
) -> None:
    async with client(sandbox) as smtp:
        with pytest.raises(aiosmtplib.SMTPAuthenticationError) as refused:
            await smtp.login(user, password)
    assert refused.value.code == 535
    assert "5.7.8" in refused.value.message


async def test_550_is_answered_at_rcpt_once(sandbox: SandboxServer) -> None:
    sandbox.state.add_fault(FaultRule(provider="smtp", status=550, count=1))
    with pytest.raises(aiosmtplib.SMTPRecipientsRefused) as refused:
        await send(sandbox)
    assert refused.value.recipients[0].code == 550
    await send(sandbox)
    assert len(sandbox.state.messages("smtp")) == 1


async def test_421_closes_the_session(sandbox: SandboxServer) -> None:
    sandbox.state.add_fault(FaultRule(provider="smtp", status=421, count=1))
    with pytest.raises(aiosmtplib.SMTPException) as refused:
        await send(sandbox)
    assert "421" in str(refused.value)
    assert sandbox.state.messages("smtp") == []


@pytest.mark.parametrize("status", [451, 554])
async def test_data_stage_codes_are_answered_after_data(
    sandbox: SandboxServer, status: int
) -> None:
    sandbox.state.add_fault(FaultRule(provider="smtp", status=status, count=1))
    with pytest.raises(aiosmtplib.SMTPDataError) as refused:
        await send(sandbox)
    assert refused.value.code == status
    assert sandbox.state.messages("smtp") == []


async def test_timeout_hangs_at_data_without_recording(sandbox: SandboxServer) -> None:
    sandbox.state.add_fault(FaultRule(provider="smtp", mode=FaultMode.TIMEOUT, count=1))
    with pytest.raises(aiosmtplib.SMTPTimeoutError):
        await send(sandbox, timeout=0.3)
    assert sandbox.state.messages("smtp") == []


async def test_accept_then_hang_records_then_times_out(sandbox: SandboxServer) -> None:
    rule = FaultRule(provider="smtp", mode=FaultMode.ACCEPT_THEN_HANG, count=1)
    sandbox.state.add_fault(rule)
    with pytest.raises(aiosmtplib.SMTPTimeoutError):
        await send(sandbox, timeout=0.3)
    assert [record.job_id for record in sandbox.state.messages("smtp")] == ["job-smtp-1"]


async def test_stop_is_prompt_while_a_session_hangs() -> None:
    server = SandboxServer()
    await server.start()
    server.state.add_fault(FaultRule(provider="smtp", mode=FaultMode.TIMEOUT))
    pending = asyncio.create_task(send(server, timeout=60))
    deadline = time.monotonic() + 5
    while server.state.recorder.stats()["requests"]["smtp"] == 0:
        assert time.monotonic() < deadline, "the message never reached the sink"
        await asyncio.sleep(0.01)
    await asyncio.wait_for(server.stop(), timeout=5)
    with pytest.raises(aiosmtplib.SMTPException):
        await pending
    assert server.state.messages("smtp") == []
