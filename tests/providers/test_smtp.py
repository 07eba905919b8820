"""SMTP adapter against a real aiosmtpd server on 127.0.0.1 (RFC 5321 reply codes)."""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default as default_policy
from typing import Any, cast

import httpx
import pytest
from aiosmtpd.smtp import SMTP as SMTPServer
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session

from homing.errors import InvalidCredentials
from homing.models import EmailContent, FailureClass
from homing.providers.base import OutgoingEmail, ProviderFailure
from homing.vendors.smtp.adapter import SmtpProvider, build_message, classify_reply

USERNAME = "mailer"
PASSWORD = "smtp-secret-pass"
# The SMTP adapter accepts an HTTP client only to share the factory signature.
UNUSED_HTTP = cast(httpx.AsyncClient, None)
JOB_ID = "0195a0c0-0000-7000-8000-000000000005"
EMAIL = OutgoingEmail(
    job_id=JOB_ID,
    content=EmailContent(
        to="Ada <ada@example.com>",
        from_="Homing <noreply@acme.test>",
        subject="Hello",
        text="plain body",
        html="<p>html body</p>",
    ),
)


@dataclass
class Handler:
    """An aiosmtpd handler that can be told what to answer at RCPT and DATA."""

    rcpt_reply: str | None = None
    data_reply: str | None = None
    hang_at_data: bool = False
    drop_at_data: bool = False
    envelopes: list[Envelope] = field(default_factory=list)
    logins: list[bytes] = field(default_factory=list)
    sessions: int = 0
    port: int = 0

    async def handle_EHLO(
        self,
        server: SMTPServer,
        session: Session,
        envelope: Envelope,
        hostname: str,
        responses: list[str],
    ) -> list[str]:
        self.sessions += 1
        session.host_name = hostname
        return responses

    async def handle_RCPT(
        self,
        server: SMTPServer,
        session: Session,
        envelope: Envelope,
        address: str,
        options: list[str],
    ) -> str:
        if self.rcpt_reply:
            return self.rcpt_reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTPServer, session: Session, envelope: Envelope) -> str:
        if self.drop_at_data and server.transport is not None:
            server.transport.close()
        if self.drop_at_data or self.hang_at_data:
            # Never answer; the connection's loss cancels this coroutine.
            await asyncio.Event().wait()
        if self.data_reply:
            return self.data_reply
        self.envelopes.append(envelope)
        return "250 2.0.0 Ok: queued as ABC123"

    def authenticate(
        self, server: SMTPServer, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        ok = isinstance(data, LoginPassword) and (data.login, data.password) == (
            USERNAME.encode(),
            PASSWORD.encode(),
        )
        if ok:
            self.logins.append(mechanism.encode())
        # handled=False lets aiosmtpd send the 535 reply itself.
        return AuthResult(success=ok, handled=False)


@asynccontextmanager
async def serve(exclude: list[str] | None = None) -> AsyncIterator[Handler]:
    """An aiosmtpd server on an ephemeral 127.0.0.1 port, AUTH allowed without TLS."""
    handler = Handler()
    server = await asyncio.get_running_loop().create_server(
        lambda: SMTPServer(
            handler,
            hostname="mx.test",
            authenticator=handler.authenticate,
            auth_require_tls=False,
            auth_exclude_mechanism=exclude,
        ),
        "127.0.0.1",
        0,
    )
    handler.port = server.sockets[0].getsockname()[1]
    try:
        yield handler
    finally:
        server.close()
        await server.wait_closed()


@pytest.fixture
async def smtp() -> AsyncIterator[Handler]:
    async with serve() as handler:
        yield handler


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def provider(port: int, password: str = PASSWORD, **config: Any) -> SmtpProvider:
    credentials = {"host": "127.0.0.1", "port": port, "username": USERNAME, "password": password}
    credentials["starttls"] = False
    settings = {"local_hostname": "client.test", "timeout": 5, **config}
    return SmtpProvider(credentials, settings, UNUSED_HTTP)


async def failure_of(port: int, email: OutgoingEmail = EMAIL, **config: Any) -> ProviderFailure:
    with pytest.raises(ProviderFailure) as info:
        await provider(port, **config).send(email)
    return info.value


def received(smtp: Handler) -> EmailMessage:
    [envelope] = smtp.envelopes
    assert envelope.original_content is not None
    message = message_from_bytes(envelope.original_content, policy=default_policy)
    assert isinstance(message, EmailMessage)
    return message


async def test_send_delivers_a_complete_rfc5322_message(smtp: Handler) -> None:
    result = await provider(smtp.port).send(EMAIL)

    assert result.status_code == 250
    assert re.fullmatch(r"<[0-9a-f-]{36}@acme\.test>", result.provider_message_id or "")
    [envelope] = smtp.envelopes
    assert envelope.mail_from == "noreply@acme.test"
    assert envelope.rcpt_tos == ["ada@example.com"]
    assert smtp.logins == [b"PLAIN"]
    message = received(smtp)
    assert message["Message-ID"] == result.provider_message_id
    assert message["From"] == "Homing <noreply@acme.test>"
    assert message["To"] == "Ada <ada@example.com>"
    assert message["Subject"] == "Hello"
    assert message["Date"]
    assert message["MIME-Version"] == "1.0"
    assert message["X-Homing-Job-Id"] == JOB_ID
    assert message.get_content_type() == "multipart/alternative"
    text, html = message.iter_parts()
    assert (text.get_content_type(), text.get_content().strip()) == ("text/plain", "plain body")
    assert (html.get_content_type(), html.get_content().strip()) == (
        "text/html",
        "<p>html body</p>",
    )


async def test_send_authenticates_with_login_when_plain_is_not_offered() -> None:
    async with serve(exclude=["PLAIN"]) as handler:
        await provider(handler.port).send(EMAIL)
    assert handler.logins == [b"LOGIN"]


async def test_html_only_unicode_message_is_a_single_7bit_safe_part(smtp: Handler) -> None:
    content = EmailContent(
        to="ada@example.com", from_="noreply@acme.test", subject="Grüße ✓", html="<p>Grüße</p>"
    )
    await provider(smtp.port).send(OutgoingEmail(job_id=JOB_ID, content=content))
    raw = smtp.envelopes[0].original_content or b""
    assert raw.isascii()
    message = received(smtp)
    assert message["Subject"] == "Grüße ✓"
    assert message.get_content_type() == "text/html"
    assert message.get_content().strip() == "<p>Grüße</p>"


async def test_bad_password_is_provider_permanent(smtp: Handler) -> None:
    failure = await failure_of(smtp.port, password="wrong")
    assert failure.failure_class is FailureClass.PROVIDER_PERMANENT
    assert failure.status_code == 535
    assert smtp.envelopes == []


async def test_check_credentials_rejects_bad_password_without_echoing_it(smtp: Handler) -> None:
    with pytest.raises(InvalidCredentials) as info:
        await provider(smtp.port, password="wrong-secret").check_credentials()
    assert "wrong-secret" not in info.value.message
    assert "535" in info.value.message


async def test_check_credentials_accepts_good_login(smtp: Handler) -> None:
    await provider(smtp.port).check_credentials()
    assert smtp.logins == [b"PLAIN"]
    assert smtp.sessions == 1


async def test_check_credentials_without_username_still_greets(smtp: Handler) -> None:
    credentials = {"host": "127.0.0.1", "port": smtp.port, "starttls": False}
    await SmtpProvider(
        credentials, {"local_hostname": "client.test"}, UNUSED_HTTP
    ).check_credentials()
    assert smtp.sessions == 1
    assert smtp.logins == []


async def test_check_credentials_when_server_is_down_is_transient(closed_port: int) -> None:
    with pytest.raises(ProviderFailure) as info:
        await provider(closed_port).check_credentials()
    assert info.value.failure_class is FailureClass.TRANSIENT


@pytest.mark.parametrize(
    ("rcpt_reply", "expected"),
    [
        ("550 5.1.1 No such user", FailureClass.MESSAGE_PERMANENT),
        ("553 5.1.3 Bad mailbox name", FailureClass.MESSAGE_PERMANENT),
        ("421 4.7.0 Too many messages, slow down", FailureClass.THROTTLED),
        ("451 4.3.0 Local error in processing", FailureClass.TRANSIENT),
        ("450 4.2.1 Mailbox busy", FailureClass.TRANSIENT),
        ("452 4.7.1 Rate limit reached", FailureClass.THROTTLED),
    ],
)
async def test_rcpt_replies_are_classified(
    smtp: Handler, rcpt_reply: str, expected: FailureClass
) -> None:
    smtp.rcpt_reply = rcpt_reply
    failure = await failure_of(smtp.port)
    assert failure.failure_class is expected
    assert failure.status_code == int(rcpt_reply[:3])
    assert rcpt_reply[4:] in failure.detail


@pytest.mark.parametrize(
    ("data_reply", "expected"),
    [
        ("554 5.7.1 Message rejected as spam", FailureClass.MESSAGE_PERMANENT),
        ("552 5.3.4 Message too big", FailureClass.MESSAGE_PERMANENT),
        ("451 4.3.0 Try again later", FailureClass.TRANSIENT),
    ],
)
async def test_data_replies_are_classified(
    smtp: Handler, data_reply: str, expected: FailureClass
) -> None:
    smtp.data_reply = data_reply
    failure = await failure_of(smtp.port)
    assert failure.failure_class is expected


async def test_drop_after_data_is_uncertain(smtp: Handler) -> None:
    smtp.drop_at_data = True
    failure = await failure_of(smtp.port)
    assert failure.failure_class is FailureClass.UNCERTAIN


async def test_timeout_waiting_for_data_reply_is_uncertain(smtp: Handler) -> None:
    smtp.hang_at_data = True
    failure = await failure_of(smtp.port, timeout=0.2)
    assert failure.failure_class is FailureClass.UNCERTAIN


async def test_connection_refused_is_transient(closed_port: int) -> None:
    failure = await failure_of(closed_port)
    assert failure.failure_class is FailureClass.TRANSIENT


@pytest.mark.parametrize("field_name", ["subject", "to", "from_"])
async def test_line_breaks_in_headers_are_refused_before_connecting(
    smtp: Handler, field_name: str
) -> None:
    values = {"to": "ada@example.com", "from_": "noreply@acme.test", "subject": "Hi"}
    values[field_name] += "\r\nBcc: victim@example.com"
    email = OutgoingEmail(job_id=JOB_ID, content=EmailContent(**values, text="x"))
    failure = await failure_of(smtp.port, email)
    assert failure.failure_class is FailureClass.MESSAGE_PERMANENT
    assert smtp.sessions == 0


def test_build_message_refuses_bare_lf_in_subject() -> None:
    email = OutgoingEmail(
        job_id=JOB_ID, content=EmailContent(to="a@b.test", from_="c@d.test", subject="x\ny")
    )
    with pytest.raises(ProviderFailure) as info:
        build_message(email)
    assert info.value.failure_class is FailureClass.MESSAGE_PERMANENT


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (530, "5.7.0 Authentication required", FailureClass.PROVIDER_PERMANENT),
        (534, "5.7.9 Mechanism too weak", FailureClass.PROVIDER_PERMANENT),
        (535, "5.7.8 Bad credentials", FailureClass.PROVIDER_PERMANENT),
        (551, "5.1.6 User not local", FailureClass.MESSAGE_PERMANENT),
        (454, "4.7.0 TLS not available", FailureClass.THROTTLED),
        (454, "TLS not available", FailureClass.TRANSIENT),
        (503, "5.5.1 Bad sequence", FailureClass.PROVIDER_PERMANENT),
    ],
)
def test_classify_reply_table(code: int, message: str, expected: FailureClass) -> None:
    assert classify_reply(code, message) is expected


def test_repr_never_shows_the_password() -> None:
    assert PASSWORD not in repr(provider(25))
