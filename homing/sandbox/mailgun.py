"""Mailgun as the sandbox speaks it: ``POST /v3/{domain}/messages`` and ``GET /v3/domains``.

Sends are form bodies (urlencoded or multipart) with HTTP Basic ``api:<key>``. Success
is 200 ``{"id": "<…@domain>", "message": "Queued. Thank you."}``; errors are
``{"message"}`` except 401, whose body is the plain text ``Forbidden``.

Header fields come as ``h:<Name>`` form fields, each appended to the message as a MIME
header (documentation.mailgun.com, "Sending messages": ``h:X-My-Header``). The ``o:``,
``h:`` and ``v:`` fields together take at most 16 kB (``MAX_OPTIONS_BYTES``); more is a
400 (the wording of that refusal is the sandbox's own).

Batch sending (user-manual/sending-messages/batch-sending): at most 1,000 recipients
(``MAX_RECIPIENTS``), and ``recipient-variables``, a JSON object keyed by plain
recipient address. With it, each ``to`` gets a message of its own, recorded one per
recipient under the request's one id, ``%recipient.<key>%`` replaced by that
recipient's value in the subject, the bodies and the ``v:`` values (a key it lacks
stays as written). A ``recipient-variables`` that is not a JSON object is a 400 (the
wording is the sandbox's own), as is anything else refused: nothing is sent.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, getaddresses, parseaddr
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, Router

from homing.sandbox.faults import guarded, retry_after_seconds, status_phrase
from homing.sandbox.form_bodies import Form, read_form
from homing.sandbox.state import FaultScope, RecordedMessage, SandboxState

PROVIDER = "mailgun"
SANDBOX_DOMAIN = "sandbox.homing.test"
_NO_BODY = "Need at least one of 'text', 'html' or 'template' parameters specified"
MAX_OPTIONS_BYTES = 16 * 1024
_OPTION_PREFIXES = ("o:", "h:", "v:")
_TOO_MANY_OPTIONS = "Too much data in o:, h: and v: parameters: at most 16kB in all"
MAX_RECIPIENTS = 1000
_TOO_MANY_RECIPIENTS = "Too many recipients: at most 1000 per message"
_BAD_VARIABLES = "recipient-variables parameter is not a valid JSON object"
_RECIPIENT_VARIABLE = re.compile(r"%recipient\.([^%\s]+)%")


def forbidden() -> PlainTextResponse:
    """Mailgun's answer to a bad or missing key: 401 with the plain text ``Forbidden``."""
    return PlainTextResponse("Forbidden", status_code=401)


def message_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """Mailgun's JSON error body."""
    return JSONResponse({"message": message}, status_code=status, headers=headers)


def fault_response(status: int, retry_after: float | None) -> Response:
    """The reply Mailgun gives for ``status``; 429 names the time to try again."""
    if status == 401:
        return forbidden()
    message = status_phrase(status)
    if status == 429:
        when = datetime.now(UTC) + timedelta(seconds=retry_after or 60.0)
        message = f"request limit exceeded, try again after {format_datetime(when)}"
    header = retry_after_seconds(retry_after)
    return message_response(status, message, None if header is None else {"Retry-After": header})


def _authorized(request: Request) -> bool:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        user, _, key = base64.b64decode(token, validate=True).decode().partition(":")
    except ValueError:
        return False
    return user == "api" and bool(key) and "invalid" not in key


def _values(form: Form, name: str) -> list[str]:
    return [value for key, value in form if key == name]


def _first(form: Form, name: str) -> str | None:
    return next((value for key, value in form if key == name), None)


def _recipients(form: Form) -> list[str]:
    return [address for _, address in getaddresses(_values(form, "to")) if address]


def _problem(form: Form) -> JSONResponse | None:
    if "@" not in parseaddr(_first(form, "from") or "")[1]:
        return message_response(400, "'from' parameter is missing")
    recipients = _recipients(form)
    if not recipients:
        return message_response(400, "'to' parameter is missing")
    if len(recipients) > MAX_RECIPIENTS:
        return message_response(400, _TOO_MANY_RECIPIENTS)
    if _variables(form) is None:
        return message_response(400, _BAD_VARIABLES)
    if any("@" not in address for address in recipients):
        return message_response(
            400, "to parameter is not a valid address. please check documentation"
        )
    if not any(_first(form, name) for name in ("text", "html", "template")):
        return message_response(400, _NO_BODY)
    options = sum(
        len(key.encode()) + len(value.encode())
        for key, value in form
        if key.startswith(_OPTION_PREFIXES)
    )
    if options > MAX_OPTIONS_BYTES:
        return message_response(400, _TOO_MANY_OPTIONS)
    return None


def _headers(form: Form) -> tuple[tuple[str, str], ...]:
    return tuple((key[2:], value) for key, value in form if key.startswith("h:") and key[2:])


def _variables(form: Form) -> dict[str, Any] | None:
    """``recipient-variables`` by lower-cased address ({} when absent; None: unreadable)."""
    given = _first(form, "recipient-variables")
    if given is None:
        return {}
    try:
        variables = json.loads(given)
    except ValueError:
        return None
    if not isinstance(variables, dict):
        return None
    return {str(k).lower(): v for k, v in variables.items() if isinstance(v, dict)}


def _substitute(value: str | None, mine: dict[str, Any]) -> str | None:
    if value is None:
        return None
    return _RECIPIENT_VARIABLE.sub(
        lambda m: str(mine[m.group(1)]) if m.group(1) in mine else m.group(0), value
    )


def _job_id(form: Form, mine: dict[str, Any]) -> str | None:
    if (job_id := _first(form, "v:hjid")) is not None:
        return _substitute(job_id, mine)
    try:
        variables = json.loads(_first(form, "h:X-Mailgun-Variables") or "{}")
    except ValueError:
        return None
    return str(variables["hjid"]) if isinstance(variables, dict) and "hjid" in variables else None


def _record(
    form: Form, to: tuple[str, ...], mine: dict[str, Any], message_id: str, request: Request
) -> RecordedMessage:
    return RecordedMessage(
        provider=PROVIDER,
        to=to,
        sender=parseaddr(_first(form, "from") or "")[1],
        subject=_substitute(_first(form, "subject"), mine),
        text=_substitute(_first(form, "text"), mine),
        html=_substitute(_first(form, "html"), mine),
        message_id=message_id,
        job_id=_job_id(form, mine),
        idempotency_key=request.headers.get("idempotency-key"),
        headers=_headers(form),
    )


def _records(form: Form, message_id: str, request: Request) -> list[RecordedMessage]:
    """One message to all recipients, or with recipient variables one per recipient."""
    variables = _variables(form) or {}
    recipients = tuple(_recipients(form))
    if _first(form, "recipient-variables") is None:
        return [_record(form, recipients, {}, message_id, request)]
    return [
        _record(form, (to,), variables.get(to.lower(), {}), message_id, request)
        for to in recipients
    ]


async def send(state: SandboxState, request: Request) -> Response:
    """``POST /v3/{domain}/messages``: validate the form, record, answer ``Queued``."""
    if not _authorized(request):
        return forbidden()
    form = await read_form(request)
    if (problem := _problem(form)) is not None:
        return problem
    stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
    message_id = f"<{stamp}.{secrets.token_hex(8)}@{request.path_params['domain']}>"
    for record in _records(form, message_id, request):
        state.recorder.record(record)
    return JSONResponse({"id": message_id, "message": "Queued. Thank you."})


async def domains(request: Request) -> Response:
    """``GET /v3/domains`` (and ``/v4/domains``): the account's domains."""
    if not _authorized(request):
        return forbidden()
    created = format_datetime(datetime(2024, 1, 1, tzinfo=UTC), usegmt=True)
    item = {"name": SANDBOX_DOMAIN, "state": "active", "type": "custom", "created_at": created}
    return JSONResponse({"total_count": 1, "items": [item]})


def router(state: SandboxState) -> Router:
    """The Mailgun routes, to mount under ``/mailgun``."""

    async def send_endpoint(request: Request) -> Response:
        return await send(state, request)

    check = guarded(state, PROVIDER, FaultScope.CHECK, fault_response, domains)
    return Router(
        routes=[
            Route(
                "/v3/{domain}/messages",
                guarded(state, PROVIDER, FaultScope.SEND, fault_response, send_endpoint),
                methods=["POST"],
            ),
            Route("/v3/domains", check, methods=["GET"]),
            Route("/v4/domains", check, methods=["GET"]),
        ]
    )
