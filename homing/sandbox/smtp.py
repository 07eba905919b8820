"""The SMTP sink: an aiosmtpd server on the sandbox's own event loop.

AUTH PLAIN and LOGIN are offered without TLS; a username or password containing
``invalid`` gets ``535 5.7.8``. Each message is recorded as provider ``smtp``. A fault
rule is taken per transaction (at MAIL) and its status answered at RCPT, or at DATA
for the codes that belong there (451, 552, 554). A message's ``headers`` are all its
header fields as they arrived, in order, unfolded.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
import weakref
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, parseaddr
from typing import Any

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

from homing.sandbox.state import FaultMode, FaultRule, FaultScope, RecordedMessage, SandboxState

PROVIDER = "smtp"
_FOLD = re.compile(r"\r?\n(?=[ \t])")
HOSTNAME = "sandbox.homing.test"
DATA_STAGE_CODES = frozenset({451, 552, 554})
REPLIES = {
    421: "421 4.7.0 Try again later, closing connection",
    450: "450 4.2.1 Mailbox busy, try again later",
    451: "451 4.3.0 Local error in processing",
    452: "452 4.5.3 Too many recipients",
    454: "454 4.7.0 Temporary authentication failure",
    530: "530 5.7.0 Authentication required",
    535: "535 5.7.8 Authentication credentials invalid",
    550: "550 5.1.1 Mailbox unavailable",
    552: "552 5.3.4 Message size exceeds fixed limit",
    553: "553 5.1.3 Bad recipient address syntax",
    554: "554 5.7.1 Transaction failed",
}


class _DropLoginDataNotice(logging.Filter):
    """aiosmtpd 1.4 logs a deprecation warning on every successful AUTH; keep logs quiet."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "login_data is deprecated" not in record.getMessage()


_QUIET_AUTH = _DropLoginDataNotice()


def fault_reply(status: int) -> str:
    """The SMTP reply line for an injected status code."""
    return REPLIES.get(status, f"{status} Sandbox fault")


def authenticate(
    server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any
) -> AuthResult:
    """aiosmtpd authenticator: any non-empty login and password without ``invalid``."""
    if not isinstance(auth_data, LoginPassword):
        return AuthResult(success=False, handled=False)
    login = auth_data.login.decode("utf-8", "replace")
    password = auth_data.password.decode("utf-8", "replace")
    if not login or not password or "invalid" in login or "invalid" in password:
        return AuthResult(success=False, handled=False)
    return AuthResult(success=True, auth_data=auth_data)


def parse_message(content: bytes, mail_from: str, rcpt_tos: list[str]) -> RecordedMessage:
    """Turn the DATA of a transaction into the record the sandbox keeps."""
    message = BytesParser(policy=policy.default).parsebytes(content)
    assert isinstance(message, EmailMessage)
    headers_to = [address for _, address in getaddresses(message.get_all("To", [])) if address]
    return RecordedMessage(
        provider=PROVIDER,
        to=tuple(rcpt_tos or headers_to),
        sender=parseaddr(str(message.get("From", "")))[1] or mail_from,
        subject=_header(message, "Subject"),
        text=_body(message, "plain"),
        html=_body(message, "html"),
        message_id=_header(message, "Message-ID") or f"<{uuid.uuid4()}@{HOSTNAME}>",
        job_id=_header(message, "X-Homing-Job-Id"),
        idempotency_key=_header(message, "Resend-Idempotency-Key")
        or _header(message, "Idempotency-Key"),
        headers=arrived_headers(message),
    )


def arrived_headers(message: EmailMessage) -> tuple[tuple[str, str], ...]:
    """Every header field of ``message`` in the order it arrived, each value unfolded
    (RFC 5322 §2.2.3: a CRLF before white space removed) and left unparsed."""
    return tuple((name, _FOLD.sub("", str(value)).strip()) for name, value in message.raw_items())


def _header(message: EmailMessage, name: str) -> str | None:
    value = message.get(name)
    return None if value is None else str(value).strip()


def _body(message: EmailMessage, subtype: str) -> str | None:
    part = message.get_body(preferencelist=(subtype,))
    if part is None or part.get_content_subtype() != subtype:
        return None
    content = part.get_content()
    return content if isinstance(content, str) else None


class SinkHandler:
    """aiosmtpd handler hooks: take faults, answer them, record accepted messages."""

    def __init__(self, state: SandboxState) -> None:
        self._state = state
        self._faults: weakref.WeakKeyDictionary[Any, FaultRule] = weakref.WeakKeyDictionary()

    async def handle_MAIL(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        self._state.recorder.count_request(PROVIDER)
        rule = self._state.faults.take(PROVIDER, FaultScope.SEND)
        if rule is not None:
            self._faults[envelope] = rule
        envelope.mail_from = address
        envelope.mail_options.extend(options)
        return "250 OK"

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        if (reply := _stage_reply(self._faults.get(envelope), data_stage=False)) is not None:
            return reply
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(options)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        rule = self._faults.pop(envelope, None)
        if rule is not None and rule.latency_ms:
            await self._state.hang(rule.latency_ms / 1000)
        if rule is not None and rule.mode is FaultMode.TIMEOUT:
            await self._state.hang()
            return fault_reply(421)
        if (reply := _stage_reply(rule, data_stage=True)) is not None:
            return reply
        record = parse_message(envelope.original_content, envelope.mail_from, envelope.rcpt_tos)
        self._state.recorder.record(record)
        if rule is not None and rule.mode is FaultMode.ACCEPT_THEN_HANG:
            await self._state.hang()
        return f"250 2.0.0 Ok: queued as {record.message_id}"


def _stage_reply(rule: FaultRule | None, *, data_stage: bool) -> str | None:
    if rule is None or rule.mode is not FaultMode.ERROR or rule.status is None:
        return None
    if (rule.status in DATA_STAGE_CODES) is not data_stage:
        return None
    return fault_reply(rule.status)


class SmtpSink:
    """A listening SMTP sink bound to ``host``; ``port`` 0 picks a free port."""

    def __init__(self, state: SandboxState, host: str = "127.0.0.1", port: int = 0) -> None:
        self._handler = SinkHandler(state)
        self._host = host
        self._requested_port = port
        self._server: asyncio.Server | None = None
        self._sessions: weakref.WeakSet[Any] = weakref.WeakSet()

    @property
    def port(self) -> int:
        """The port the sink listens on."""
        if self._server is None:
            raise RuntimeError("the SMTP sink is not listening")
        return int(self._server.sockets[0].getsockname()[1])

    def _session(self) -> Any:
        protocol = SMTP(
            self._handler,
            hostname=HOSTNAME,
            ident="Homing sandbox ESMTP",
            authenticator=authenticate,
            auth_require_tls=False,
            loop=asyncio.get_running_loop(),
        )
        self._sessions.add(protocol)
        return protocol

    async def start(self) -> None:
        """Listen; returns once the socket accepts connections."""
        logging.getLogger("mail.log").addFilter(_QUIET_AUTH)
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._session, self._host, self._requested_port)

    async def stop(self) -> None:
        """Stop listening and drop every open session, hanging or not."""
        if self._server is None:
            return
        self._server.close()
        for protocol in list(self._sessions):
            if protocol.transport is not None:
                protocol.transport.close()
        await self._server.wait_closed()
        self._server = None
