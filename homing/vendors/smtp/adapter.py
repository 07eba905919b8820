"""SMTP submission over aiosmtplib (RFC 5321/6409), classified by its reply
codes (RFC 5321 §4.2).

One connection per send: connect (implicit TLS or STARTTLS), AUTH, MAIL, RCPT, DATA,
QUIT. Where the session broke decides the class: before DATA nothing was accepted, so
a drop is transient; during DATA the server may already have queued the message.
"""

from __future__ import annotations

import asyncio
import math
import socket
import ssl
import uuid
from collections.abc import Awaitable, Callable, Mapping
from email.errors import MessageError
from email.message import EmailMessage
from email.policy import SMTP as SMTP_POLICY
from email.utils import formatdate
from typing import Any, ClassVar, Final

import aiosmtplib
import httpx

from homing.email_headers import unstructured
from homing.errors import InvalidCredentials, InvalidRequest
from homing.models import FailureClass
from homing.providers.base import OutgoingEmail, ProviderFailure, SendResult, mailboxes
from homing.providers.http import MAX_DETAIL, redact

TRANSIENT = FailureClass.TRANSIENT
THROTTLED = FailureClass.THROTTLED
PROVIDER_PERMANENT = FailureClass.PROVIDER_PERMANENT
MESSAGE_PERMANENT = FailureClass.MESSAGE_PERMANENT
UNCERTAIN = FailureClass.UNCERTAIN

# Reply codes with a class of their own; other 4xx are transient, other 5xx are the
# server's configuration or our dialogue (provider_permanent).
REPLY_CLASSES: Final[Mapping[int, FailureClass]] = {
    421: THROTTLED,  # closing; in practice usually a rate rule
    530: PROVIDER_PERMANENT,  # authentication required
    534: PROVIDER_PERMANENT,  # mechanism too weak
    535: PROVIDER_PERMANENT,  # bad credentials
    550: MESSAGE_PERMANENT,  # mailbox unavailable or policy
    551: MESSAGE_PERMANENT,  # user not local
    552: MESSAGE_PERMANENT,  # too big
    553: MESSAGE_PERMANENT,  # bad mailbox name
    554: MESSAGE_PERMANENT,  # transaction failed
}
THROTTLING_ENHANCED_PREFIX: Final = "4.7."
DEFAULT_TIMEOUT: Final = 30.0
MAX_TIMEOUT: Final = 300.0
# aiosmtplib sends the DATA command and the content in one call, so a drop inside it
# cannot be placed before or after the content: count it as possibly accepted.
_PHASE_BEFORE_DATA: Final = "before DATA"
_PHASE_DATA: Final = "during DATA"
INTACT: Final = "smtp: a header field would not serialise intact"

# Opens the TCP connection to a checked address of (host, port), within a timeout
# (``homing.providers.guard.EndpointGuard.open_server``).
SocketOpener = Callable[[str, int, float | None], Awaitable[socket.socket]]


def classify_reply(code: int, message: str) -> FailureClass:
    """The failure class of an SMTP error reply, refined by its RFC 3463 enhanced code."""
    if code in REPLY_CLASSES:
        return REPLY_CLASSES[code]
    if 400 <= code < 500:
        if message.lstrip().startswith(THROTTLING_ENHANCED_PREFIX):
            return THROTTLED
        return TRANSIENT
    return PROVIDER_PERMANENT


def _timeout(value: Any) -> float:
    """The per-phase timeout a tenant set: finite, above 0, at most MAX_TIMEOUT.
    (``inf`` or ``nan`` would let one server hold a connection for ever; the call
    deadline bounds the whole session anyway, and registration bounds this by it.)"""
    try:
        seconds = math.nan if isinstance(value, bool) else float(value)
    except (TypeError, ValueError, OverflowError):
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT):
        raise InvalidRequest(
            f"SMTP config 'timeout' must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}"
        )
    return seconds


def _flag(value: Any) -> bool:
    # Form and JSON input may carry booleans as text; "false" must not read as true.
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


def _refuse_line_breaks(fields: Mapping[str, str]) -> None:
    for field, value in fields.items():
        if "\r" in value or "\n" in value:
            raise ProviderFailure(MESSAGE_PERMANENT, f"smtp: {field} contains CR or LF")


def build_message(email: OutgoingEmail) -> tuple[EmailMessage, str]:
    """An RFC 5322 message for ``email`` and its generated ``<uuid@sending-domain>`` id.

    Raises ``ProviderFailure`` (message_permanent) when a header field holds CR or LF,
    which would otherwise let content inject headers.
    """
    content = email.content
    _refuse_line_breaks(
        {
            "to": content.to,
            "from": content.from_,
            "subject": content.subject,
            "job id": email.job_id,
            **{f"header {name}": value for name, value in content.headers},
        }
    )
    to, sender = mailboxes(content, "smtp")
    message_id = f"<{uuid.uuid4()}@{sender.domain}>"
    # 7bit keeps non-ASCII bodies quoted-printable or base64, so no 8BITMIME is needed.
    # refold_source="none" leaves the raw extra fields as they are; every other field is
    # a header object, folded by the policy as before.
    message = EmailMessage(policy=SMTP_POLICY.clone(cte_type="7bit", refold_source="none"))
    message["Date"] = formatdate(usegmt=True)
    message["From"] = str(sender)
    message["To"] = str(to)
    # Encoded here, never parsed by the standard library (homing.email_headers.unstructured).
    message.set_raw("Subject", unstructured("Subject", content.subject))
    message["Message-ID"] = message_id
    message["X-Homing-Job-Id"] = email.job_id
    for name, value in content.headers:
        # Raw, so the field goes out as given: one line (homing.email_headers bounds it
        # to fit), never refolded into encoded words.
        message.set_raw(name, value)
    if content.html is not None and content.text is None:
        message.set_content(content.html, subtype="html")
    else:
        message.set_content(content.text or "")
        if content.html is not None:
            message.add_alternative(content.html, subtype="html")
    return message, message_id


def serialise(message: EmailMessage) -> bytes:
    """``message`` as the bytes DATA sends, checked to hold exactly the fields it was
    given, each ending in CRLF and folded only before white space.

    The check stands on every Python whatever ``email``'s own (3.11.10 and 3.12.5 added
    one, 3.11.7 has none): a header object that decoded a line break out of its value
    would add a field or end the header section early, and is refused
    (message_permanent) rather than sent.
    """
    try:
        data = message.as_bytes()
    except MessageError:  # HeaderWriteError, where the interpreter checks too
        raise ProviderFailure(MESSAGE_PERMANENT, INTACT) from None
    head = data.partition(b"\r\n\r\n")[0]
    names = []
    for line in head.split(b"\r\n"):
        if b"\r" in line or b"\n" in line:
            names.append(b"")  # a bare CR or LF: a line end to some readers
        elif not line.startswith((b" ", b"\t")):
            names.append(line.partition(b":")[0].lower())
    if names != [name.lower().encode("ascii", "replace") for name in message.keys()]:
        raise ProviderFailure(MESSAGE_PERMANENT, INTACT)
    return data


class SmtpProvider:
    """Any SMTP submission server; ``provider_message_id`` is the generated Message-ID."""

    name: ClassVar[str] = "smtp"
    supports_idempotency: ClassVar[bool] = False

    def __init__(
        self,
        credentials: dict[str, Any],
        config: dict[str, Any],
        http: httpx.AsyncClient,
        *,
        opener: SocketOpener | None = None,
    ) -> None:
        del http  # SMTP needs no HTTP client; accepted to keep one factory signature
        self._opener = opener
        self._host = str(credentials.get("host") or "")
        if not self._host:
            raise InvalidCredentials("SMTP credentials need a non-empty 'host'")
        try:
            self._port = int(credentials.get("port") or 587)
        except (TypeError, ValueError):
            raise InvalidCredentials("SMTP 'port' must be a number") from None
        if not 0 < self._port < 65536:
            raise InvalidCredentials("SMTP 'port' must be from 1 to 65535")
        self._username = credentials.get("username") or None
        self._password = str(credentials.get("password") or "")
        self._use_tls = _flag(config.get("use_tls"))
        # STARTTLS and implicit TLS are exclusive; False also stops opportunistic upgrades.
        self._start_tls = _flag(credentials.get("starttls")) and not self._use_tls
        self._timeout = _timeout(config.get("timeout", DEFAULT_TIMEOUT))
        self._local_hostname = config.get("local_hostname")
        self._validate_certs = bool(config.get("validate_certs", True))

    def __repr__(self) -> str:
        return f"SmtpProvider(host={self._host!r}, port={self._port!r})"

    async def _client(self) -> aiosmtplib.SMTP:
        """A client for the server; with an opener, on the socket it connected (TLS
        still verifies the host name)."""
        if self._opener is None:
            return self._smtp(port=self._port)
        sock = await self._opener(self._host, self._port, self._timeout)
        try:
            return self._smtp(sock=sock)
        except ValueError:
            sock.close()
            raise

    def _smtp(self, **where: Any) -> aiosmtplib.SMTP:
        return aiosmtplib.SMTP(
            hostname=self._host,
            **where,
            username=self._username,
            password=self._password if self._username else None,
            local_hostname=self._local_hostname,
            timeout=self._timeout,
            use_tls=self._use_tls,
            start_tls=self._start_tls,
            validate_certs=self._validate_certs,
        )

    async def send(self, email: OutgoingEmail) -> SendResult:
        """Submit ``email`` in one SMTP session and return the Message-ID it was given."""
        message, message_id = build_message(email)
        data = serialise(message)  # before connecting: a refused message opens no session
        # The envelope carries the bare addresses of the one mailbox each header names.
        to, from_ = mailboxes(email.content, "smtp")
        sender, recipient = from_.address, to.address
        phase = _PHASE_BEFORE_DATA
        try:
            client = await self._client()
        except OSError as exc:
            raise self._failure(exc, phase) from exc
        try:
            await client.connect()
            await client.mail(sender)
            await client.rcpt(recipient)
            phase = _PHASE_DATA
            reply = await client.data(data)
        except (aiosmtplib.SMTPException, OSError) as exc:
            raise self._failure(exc, phase) from exc
        finally:
            await _close(client)
        return SendResult(message_id, reply.code)

    async def check_credentials(self) -> None:
        """Connect, EHLO, STARTTLS when configured, AUTH when a username is set, then QUIT.

        A refusal names the reply code only, never the server's text."""
        try:
            client = await self._client()
        except OSError as exc:
            raise self._failure(exc, _PHASE_BEFORE_DATA) from exc
        try:
            await client.connect()
            if client.is_ehlo_or_helo_needed:
                await client.ehlo()
        except aiosmtplib.SMTPAuthenticationError as exc:
            raise InvalidCredentials(f"SMTP server rejected the login (reply {exc.code})") from exc
        except (aiosmtplib.SMTPException, OSError) as exc:
            failure = self._failure(exc, _PHASE_BEFORE_DATA)
            if failure.failure_class is PROVIDER_PERMANENT:
                raise InvalidCredentials(f"SMTP server refused ({_code(exc)})") from exc
            raise failure from exc
        finally:
            await _close(client)

    def _detail(self, exc: BaseException) -> str:
        if isinstance(exc, aiosmtplib.SMTPResponseException):
            text = f"{exc.code} {exc.message}"
        else:
            text = f"{type(exc).__name__}: {exc}"
        return redact(" ".join(text.split()), [self._password])[:MAX_DETAIL]

    def _failure(self, exc: BaseException, phase: str) -> ProviderFailure:
        detail = f"smtp {phase}: {self._detail(exc)}"
        if isinstance(exc, aiosmtplib.SMTPResponseException):
            failure_class = classify_reply(exc.code, exc.message)
            refused_session = (aiosmtplib.SMTPConnectResponseError, aiosmtplib.SMTPHeloError)
            if isinstance(exc, refused_session) and failure_class is MESSAGE_PERMANENT:
                # A refused greeting or EHLO says nothing about this message.
                failure_class = PROVIDER_PERMANENT
            return ProviderFailure(failure_class, detail, status_code=exc.code)
        if isinstance(exc, ssl.SSLError):
            return ProviderFailure(PROVIDER_PERMANENT, detail)
        if isinstance(exc, aiosmtplib.SMTPTimeoutError | aiosmtplib.SMTPServerDisconnected):
            return ProviderFailure(UNCERTAIN if phase == _PHASE_DATA else TRANSIENT, detail)
        if isinstance(exc, aiosmtplib.SMTPConnectError | OSError):
            return ProviderFailure(TRANSIENT, detail)
        # Other SMTPException: e.g. no AUTH offered on this connection — configuration.
        return ProviderFailure(PROVIDER_PERMANENT, detail)


def _code(exc: BaseException) -> str:
    if isinstance(exc, aiosmtplib.SMTPResponseException):
        return f"reply {exc.code}"
    return type(exc).__name__


async def _close(client: aiosmtplib.SMTP) -> None:
    """QUIT politely when still connected, and always release the transport.

    When the call is being cancelled (its deadline passed), the transport is dropped
    without a QUIT: a server that stalled the session would stall the goodbye too.
    """
    task = asyncio.current_task()
    try:
        if client.is_connected and not (task is not None and task.cancelling()):
            await client.quit()
    except (aiosmtplib.SMTPException, OSError):
        pass  # the outcome is already decided; a failed goodbye changes nothing
    finally:
        client.close()
