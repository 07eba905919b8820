"""Twilio as the sandbox speaks it: ``POST /2010-04-01/Accounts/{sid}/Messages.json``
and ``GET /2010-04-01/Accounts/{sid}.json``.

HTTP Basic ``AccountSid:AuthToken``: a user that is not the path's sid, or a token
containing ``invalid``, is 401 with code 20003. Twilio's magic test numbers answer as
Twilio's test credentials do: ``+15005550001`` invalid (21211), ``+15005550004``
opted out (21610), ``+15005550009`` not a mobile (21614). Success is 201 with the
message resource (``sid`` ``SM…``, ``status`` ``queued``).
"""

from __future__ import annotations

import base64
import binascii
import uuid
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router

from homing.sandbox.faults import guarded, retry_after_seconds, status_phrase
from homing.sandbox.state import FaultScope, RecordedMessage, SandboxState

PROVIDER = "twilio"
MAX_BODY = 1600
MAGIC_NUMBERS = {
    "+15005550001": (21211, "The 'To' number +15005550001 is not a valid phone number."),
    "+15005550004": (21610, "Attempt to send to unsubscribed recipient"),
    "+15005550009": (21614, "'To' number is not a valid mobile number"),
}
_FAULTS = {
    401: (20003, "Authenticate"),
    429: (20429, "Too Many Requests"),
    500: (20500, "An internal server error has occurred"),
    503: (20503, "Service unavailable"),
}


def error_response(
    status: int, code: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """Twilio's error body: ``code``, ``message``, ``more_info`` and ``status``."""
    body = {
        "code": code,
        "message": message,
        "more_info": f"https://www.twilio.com/docs/errors/{code}",
        "status": status,
    }
    return JSONResponse(body, status, headers)


def fault_response(status: int, retry_after: float | None) -> JSONResponse:
    """The reply Twilio gives for ``status``."""
    code, message = _FAULTS.get(status, (status, status_phrase(status)))
    header = retry_after_seconds(retry_after)
    return error_response(
        status, code, message, None if header is None else {"Retry-After": header}
    )


def _authorised(request: Request) -> str | JSONResponse:
    """The account sid of the path when Basic auth names it with a good token."""
    sid = str(request.path_params["sid"])
    header = request.headers.get("authorization", "")
    scheme, _, encoded = header.partition(" ")
    try:
        user, _, token = base64.b64decode(encoded, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        user, token = "", ""
    if scheme.lower() != "basic" or user != sid or not token or "invalid" in token:
        return error_response(401, 20003, "Authenticate")
    return sid


def _message(sid: str, form: dict[str, str], message_sid: str) -> dict[str, Any]:
    """The Message resource as twilio-python's ``MessageInstance`` reads it
    (twilio/rest/api/v2010/account/message/__init__.py): dates in RFC 2822."""
    now = format_datetime(datetime.now(UTC), usegmt=True)
    uri = f"/2010-04-01/Accounts/{sid}/Messages/{message_sid}"
    return {
        "sid": message_sid,
        "account_sid": sid,
        "to": form["To"],
        "from": form.get("From"),
        "messaging_service_sid": form.get("MessagingServiceSid"),
        "body": form["Body"],
        "status": "queued",
        "num_segments": "1",
        "num_media": "0",
        "direction": "outbound-api",
        "api_version": "2010-04-01",
        "price": None,
        "price_unit": "USD",
        "error_code": None,
        "error_message": None,
        "date_created": now,
        "date_updated": now,
        "date_sent": None,
        "uri": uri + ".json",
        "subresource_uris": {"media": uri + "/Media.json"},
    }


def _problem(form: dict[str, str]) -> JSONResponse | None:
    to = form.get("To", "")
    if not to:
        return error_response(400, 21604, "A 'To' phone number is required.")
    if to in MAGIC_NUMBERS:
        code, message = MAGIC_NUMBERS[to]
        return error_response(400, code, message)
    if not to.startswith("+") or not to[1:].isdigit():
        return error_response(400, 21211, f"The 'To' number {to} is not a valid phone number.")
    if not form.get("From") and not form.get("MessagingServiceSid"):
        return error_response(400, 21603, "A 'From' or 'MessagingServiceSid' is required.")
    body = form.get("Body", "")
    if not body:
        return error_response(400, 21602, "Message body is required.")
    if len(body) > MAX_BODY:
        return error_response(400, 21617, "The concatenated message body exceeds 1600 characters.")
    return None


async def send(state: SandboxState, request: Request) -> Response:
    """``POST …/Messages.json``: authenticate, validate, record, answer 201."""
    sid = _authorised(request)
    if isinstance(sid, JSONResponse):
        return sid
    try:
        pairs = parse_qsl((await request.body()).decode(), keep_blank_values=True)
    except (UnicodeDecodeError, ValueError):
        return error_response(400, 21601, "The request body cannot be read.")
    form = dict(pairs)
    if (problem := _problem(form)) is not None:
        return problem
    message_sid = "SM" + uuid.uuid4().hex
    state.recorder.record(
        RecordedMessage(
            provider=PROVIDER,
            to=(form["To"],),
            sender=form.get("From") or form.get("MessagingServiceSid", ""),
            subject=None,
            text=form["Body"],
            html=None,
            message_id=message_sid,
        )
    )
    return JSONResponse(_message(sid, form, message_sid), 201)


async def account(request: Request) -> Response:
    """``GET …/Accounts/{sid}.json``: the account, active."""
    sid = _authorised(request)
    if isinstance(sid, JSONResponse):
        return sid
    created = format_datetime(datetime(2024, 1, 1, tzinfo=UTC), usegmt=True)
    return JSONResponse(
        {
            "sid": sid,
            "owner_account_sid": sid,
            "friendly_name": "Homing sandbox",
            "status": "active",
            "type": "Full",
            "date_created": created,
            "date_updated": created,
            "uri": f"/2010-04-01/Accounts/{sid}.json",
        }
    )


def router(state: SandboxState) -> Router:
    """The Twilio routes, to mount under ``/twilio``."""

    async def send_endpoint(request: Request) -> Response:
        return await send(state, request)

    base = "/2010-04-01/Accounts/{sid}"
    return Router(
        routes=[
            Route(
                base + "/Messages.json",
                guarded(state, PROVIDER, FaultScope.SEND, fault_response, send_endpoint),
                methods=["POST"],
            ),
            Route(
                base + ".json",
                guarded(state, PROVIDER, FaultScope.CHECK, fault_response, account),
                methods=["GET"],
            ),
        ]
    )
